//! Dates shown to readers: written in the text after (or just above) the
//! headline, in byline-like elements, or beside a link to the page itself;
//! and what counts as chrome (navigation, sidebars, comments) when looking.

use std::sync::LazyLock;

use chrono::NaiveDate;
use regex::Regex;

use crate::date::written::{self, SlashOrder};
use crate::extract::dom::{Dom, Kind, NodeId};
use crate::extract::meta::Meta;
use crate::phrases::{Phrases, lower};

/// What the rules need to read a written date: which days are plausible,
/// and the page's order of day and month in slash dates.
pub(super) struct Reading<'a> {
    pub ok: &'a dyn Fn(NaiveDate) -> bool,
    pub order: SlashOrder,
}

impl Reading<'_> {
    /// The labelled (else first) plausible date written in `text`.
    pub(super) fn date(&self, text: &str) -> Option<NaiveDate> {
        written::parse_labelled_in(text, self.order).filter(|&d| (self.ok)(d))
    }
}

static CHROME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"related|comment|sidebar|recommend|popular|trending|teaser|more-|widget|footer|(^|[\s_-])nav")
        .expect("static regex")
});
static DATE_CLASS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"date|time|byline|posted|publish|submitted|meta|dateline|datum|fecha|data|info|author|stamp")
        .expect("static regex")
});

/// Is the element itself chrome for dates: a navigation, footer or sidebar
/// landmark, a class naming one (page-wide classes on `body` and the like
/// aside), a quoted or embedded post (`blockquote`: a social media post
/// carries the day it was posted), or the site's masthead (today's date)?
/// A `footer` of the story's own `article` is its meta line (posted on,
/// by), not the site's footer.
fn is_chrome(dom: &Dom, id: NodeId) -> bool {
    match dom.tag(id) {
        "footer" if story_footer(dom, id) => dom
            .attr(id, "class")
            .is_some_and(|c| CHROME.is_match(&c.to_ascii_lowercase().replace("footer", ""))),
        "nav" | "footer" | "aside" | "menu" | "blockquote" => true,
        "html" | "body" | "main" | "article" => false,
        "header" if is_masthead(dom, id) => true,
        _ => dom
            .attr(id, "class")
            .is_some_and(|c| CHROME.is_match(&ascii_lower(c))),
    }
}

/// `s` in ASCII lower case, copied only when it has a capital.
fn ascii_lower(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(s.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// A landmark whose subtree a text scan skips: navigation, sidebars and
/// footers but a story's own (see [`is_chrome`]).
fn skipped_landmark(dom: &Dom, id: NodeId) -> bool {
    dom.is_element(id)
        && match dom.tag(id) {
            "nav" | "aside" => true,
            "footer" => !story_footer(dom, id),
            _ => false,
        }
}

/// Is a `footer` inside the `article` that holds the page's headline (an
/// `h1`): that story's own footer (HTML gives a footer to its nearest
/// article)?
fn story_footer(dom: &Dom, id: NodeId) -> bool {
    dom.ancestors(id)
        .find(|&a| dom.tag(a) == "article")
        .is_some_and(|a| {
            dom.descendants(a)
                .any(|d| dom.is_element(d) && dom.tag(d) == "h1")
        })
}

/// A `header` outside any `article` or `main` that holds no headline
/// (`h1`, `h2`) but the site's logo (a heading linking to the home page):
/// the site's masthead (logo, navigation, often today's date), not a
/// story's header.
fn is_masthead(dom: &Dom, id: NodeId) -> bool {
    let links_home = |h: NodeId| {
        dom.self_and_ancestors(h)
            .take_while(|&a| a != id)
            .chain(dom.descendants(h))
            .any(|a| {
                dom.is_element(a) && dom.tag(a) == "a" && dom.attr(a, "href").is_some_and(is_home)
            })
    };
    !dom.ancestors(id)
        .any(|a| matches!(dom.tag(a), "article" | "main"))
        && !dom
            .descendants(id)
            .any(|d| dom.is_element(d) && matches!(dom.tag(d), "h1" | "h2") && !links_home(d))
}

/// Is a link's target a site's home page (`/`, `https://example.org/`)?
fn is_home(href: &str) -> bool {
    let path = href.find("://").map_or(href, |i| {
        let rest = &href[i + 3..];
        rest.find('/').map_or("", |j| &rest[j..])
    });
    matches!(path.trim(), "" | "/" | "./")
}

/// The page's headline: its first `h1` outside the masthead (a site's logo
/// is often an `h1` there).
fn headline(dom: &Dom, m: &Meta) -> Option<NodeId> {
    m.h1.iter().map(|h| h.0).find(|&h| {
        !dom.ancestors(h)
            .any(|a| dom.tag(a) == "header" && is_masthead(dom, a))
    })
}

/// Is `id` inside chrome (navigation, footer, sidebar, related lists, comments)?
fn in_chrome(dom: &Dom, id: NodeId) -> bool {
    chrome_above(dom, id, false)
}

/// [`in_chrome`], except that an `aside` within an `article` is not chrome:
/// it is that article's own box (its meta data, say).
pub(super) fn in_chrome_outside_article(dom: &Dom, id: NodeId) -> bool {
    chrome_above(dom, id, true)
}

fn chrome_above(dom: &Dom, id: NodeId, article_asides: bool) -> bool {
    // Page-wide classes (`<body class="one-sidebar">`) say nothing about
    // one element, so `is_chrome` ignores them.
    let within_article = |c: NodeId| dom.ancestors(c).any(|u| dom.tag(u) == "article");
    dom.ancestors(id).any(|c| {
        is_chrome(dom, c) && !(article_asides && dom.tag(c) == "aside" && within_article(c))
    })
}

/// The first full date written in the page text after the main heading
/// (or from the content's container), outside chrome.
pub(super) fn text_date(
    dom: &Dom,
    m: &Meta,
    root: Option<NodeId>,
    read: &Reading,
) -> Option<NaiveDate> {
    let body = dom.find("body").unwrap_or(0);
    let start = headline(dom, m)
        .or_else(|| root.and_then(|r| dom.nodes[r].parent()))
        .unwrap_or(body);
    if let Some(d) = scan_text(dom, body, start, 6_000, true, read) {
        return Some(d);
    }
    if start == body {
        return None;
    }
    // Nothing after the heading: the nearest date just above it (a box
    // header) rather than the first on the page (a clock in the masthead).
    nearest_before(dom, body, start, read)
        .or_else(|| scan_text(dom, body, body, 60_000, true, read))
}

/// Text bytes above the heading in which [`nearest_before`] looks.
const ABOVE_REACH: usize = 1_500;

/// The last written date outside chrome within [`ABOVE_REACH`] bytes of text
/// before `start`.
fn nearest_before(dom: &Dom, body: NodeId, start: NodeId, read: &Reading) -> Option<NaiveDate> {
    let mut seen = 0usize;
    let mut last: Option<(NaiveDate, usize)> = None;
    let mut it = dom.descendants(body);
    while let Some(id) = it.next() {
        if id == start {
            break;
        }
        if skipped_landmark(dom, id) {
            it.skip_children_of(id);
            continue;
        }
        if let Kind::Text(t) = &dom.nodes[id].kind {
            let t = t.trim();
            seen += t.len();
            if t.len() < 300
                && let Some(d) = read.date(t)
                && !written::is_range(t)
                && !is_change_label(t)
                && !is_citation(t)
                && !in_chrome(dom, id)
            {
                last = Some((d, seen));
            }
        }
    }
    last.filter(|&(_, at)| seen - at <= ABOVE_REACH)
        .map(|(d, _)| d)
}

/// The first written date in text nodes from `start` on, within `limit` bytes of text.
pub(super) fn scan_text(
    dom: &Dom,
    body: NodeId,
    start: NodeId,
    limit: usize,
    skip_chrome: bool,
    read: &Reading,
) -> Option<NaiveDate> {
    let mut started = start == body;
    let mut seen = 0usize;
    // A date labelled as a change is kept only in case no other follows
    // within a few lines.
    let mut changed: Option<(NaiveDate, usize)> = None;
    let mut it = dom.descendants(body);
    while let Some(id) = it.next() {
        if id == start {
            started = true;
        }
        if !started {
            continue;
        }
        if skip_chrome && skipped_landmark(dom, id) {
            it.skip_children_of(id);
            continue;
        }
        if let Kind::Text(t) = &dom.nodes[id].kind {
            let len = dom.text_len(id);
            seen += len;
            // A long text node may still open with a dateline.
            let probe = if len < 300 {
                &t[..]
            } else {
                let t = t.trim_start();
                &t[..t.floor_char_boundary(DATELINE_CHARS)]
            };
            if let Some(d) = read.date(probe)
                && !written::is_range(probe)
                && !(skip_chrome
                    && (is_citation(probe)
                        || in_chrome(dom, id)
                        || super::live::in_teaser(dom, id)))
            {
                if !is_change_label(probe) {
                    return Some(d);
                }
                changed.get_or_insert((d, seen));
            }
            if changed.is_some_and(|(_, at)| seen > at + CHANGE_REACH) || seen > limit {
                break;
            }
        }
    }
    changed.map(|(d, _)| d)
}

/// Marks of a bibliographic reference: a DOI or ISBN, the day a source was
/// looked up ("accessed", "abgerufen am"), or two of volume, issue and
/// pages. Its date is the cited work's.
static CITATION_STRONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(doi[:\s]\s*10\.|isbn|issn|retrieved|accessed|abgerufen|consulté|consultado|consultato)")
        .expect("static regex")
});
static CITATION_PART: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(vol\.|volume|issue|no\.|nr\.|jg\.|bd\.|heft|pp\.|s\.)\s*\d")
        .expect("static regex")
});

/// Every word the two citation patterns name, for a cheap first test (see
/// `crate::gated`: text without any of them matches neither).
static CITATION_WORDS: Phrases = Phrases::new(&[
    "doi",
    "isbn",
    "issn",
    "retrieved",
    "accessed",
    "abgerufen",
    "consulté",
    "consultado",
    "consultato",
    "vol.",
    "volume",
    "issue",
    "no.",
    "nr.",
    "jg.",
    "bd.",
    "heft",
    "pp.",
    "s.",
]);

/// Does the text read as a bibliographic reference?
fn is_citation(text: &str) -> bool {
    CITATION_WORDS.contains(&lower(text))
        && (CITATION_STRONG.is_match(text) || CITATION_PART.find_iter(text).nth(1).is_some())
}

/// Text bytes after a change date in which a publication date may follow.
const CHANGE_REACH: usize = 300;

/// Words that label a date as a change, in the languages of the pages we
/// read (German, English, Spanish, French, Italian, Portuguese, Dutch, the
/// Nordic languages, Finnish, Polish, Czech, Russian, Japanese and Chinese).
static CHANGE_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(letzte änderung|geändert|aktualisiert|bearbeitet|updated|last modified|last edited|modified|actualizado|mis à jour|modifié le|aggiornato|atualizado|atualização|bijgewerkt|gewijzigd|uppdaterad|opdateret|oppdatert|päivitetty|aktualizacja|zaktualizowano|aktualizováno|обновлено|更新)")
        .expect("static regex")
});

/// Does the text label its date as a change rather than the publication?
fn is_change_label(text: &str) -> bool {
    CHANGE_LABEL.is_match(text) && !written::has_published_label(text)
}

/// Does the page label `day` as a change ("Aktualisiert am 20.03.2021",
/// "Updated March 20")? Read in short text nodes and byline-like elements.
pub(super) fn labels_as_change(dom: &Dom, day: NaiveDate, read: &Reading) -> bool {
    let dated = |t: &str| read.date(t) == Some(day);
    (0..dom.nodes.len()).any(|id| match &dom.nodes[id].kind {
        Kind::Text(t) if dom.text_len(id) < 300 => {
            // The label may sit in a sibling element (`<b>Updated:</b> 20.03.2021`).
            let up = dom.nodes[id].parent().and_then(|p| dom.text_within(p, 300));
            let t = up.as_deref().unwrap_or(t);
            CHANGE_LABEL.is_match(t) && dated(t)
        }
        _ => false,
    })
}

/// How far into a long text node a dateline may start.
const DATELINE_CHARS: usize = 40;

/// A URL without scheme, `www.`, query, fragment or trailing slash, for
/// telling whether a link points at the page itself.
fn link_key(u: &str) -> &str {
    let u = u.split(['#', '?']).next().unwrap_or(u);
    let u = u.find("://").map_or(u, |i| &u[i + 3..]);
    let u = u.strip_prefix("//").unwrap_or(u);
    let u = u.strip_prefix("www.").unwrap_or(u);
    u.trim_end_matches('/')
}

/// Ancestors of a link to the page in which [`self_link_date`] reads a date.
const SELF_LINK_LEVELS: usize = 3;
/// Links to the page itself that [`self_link_date`] looks beside.
const MAX_SELF_LINKS: usize = 8;

/// The date written beside a link to the page itself: a list of recent
/// posts that includes this one dates it.
pub(super) fn self_link_date(dom: &Dom, url: &str, read: &Reading) -> Option<NaiveDate> {
    let key = link_key(url);
    if key.is_empty() || !url.contains("://") {
        return None;
    }
    // The path, for links written from the root (`/blog/post/`).
    let path = key.find('/').map_or("", |i| &key[i..]);
    let is_self = |h: &str| {
        if h.starts_with("//") || h.contains("://") {
            link_key(h) == key
        } else {
            h.starts_with('/') && !path.is_empty() && link_key(h) == path
        }
    };
    (0..dom.nodes.len())
        .filter(|&id| dom.is_element(id) && dom.tag(id) == "a")
        .filter(|&id| dom.attr(id, "href").is_some_and(is_self))
        .take(MAX_SELF_LINKS)
        .find_map(|a| {
            dom.ancestors(a).take(SELF_LINK_LEVELS).find_map(|up| {
                let text = dom.text_within(up, 300)?;
                (!written::is_range(&text))
                    .then(|| read.date(&text))
                    .flatten()
            })
        })
}

/// Most byline-like elements [`byline_dates`] reads.
const MAX_BYLINES: usize = 64;

/// Every written date in the page's byline-like elements, in page order.
pub(super) fn byline_dates(dom: &Dom, read: &Reading) -> Vec<NaiveDate> {
    let mut out = Vec::new();
    let mut seen = 0;
    let mut it = dom.descendants(0);
    while let Some(id) = it.next() {
        if seen >= MAX_BYLINES {
            break;
        }
        if !dom.is_element(id) || !date_classed(dom, id) {
            continue;
        }
        if dom.written_len(id) > 400 {
            continue;
        }
        let text = dom.text(id);
        seen += 1;
        if let Some(d) = read.date(&text) {
            out.push(d);
            it.skip_children_of(id);
        }
    }
    out
}

/// Does the element's class or id name a date, time or byline?
fn date_classed(dom: &Dom, id: NodeId) -> bool {
    // Most elements have neither (no string to build).
    if dom.attr(id, "class").is_none() && dom.attr(id, "id").is_none() {
        return false;
    }
    let ci = dom.class_id(id);
    !ci.trim().is_empty() && DATE_CLASS.is_match(&ci)
}

/// Text bytes after the headline in which [`headline_byline`] looks.
const HEADLINE_REACH: usize = 600;

/// The date in a byline-like element just after the headline, in the
/// headline's own block: the page's byline, before any list or table of
/// dated items (signatures, versions, events) that the content's container
/// may also hold.
fn headline_byline(dom: &Dom, h1: NodeId, read: &Reading) -> Option<NaiveDate> {
    let block = dom.nodes[h1].parent()?;
    if matches!(dom.tag(block), "body" | "html" | "") {
        return None;
    }
    let (mut started, mut seen) = (false, 0usize);
    let mut it = dom.descendants(block);
    while let Some(id) = it.next() {
        started |= id == h1;
        if !started || id == h1 || dom.is_ancestor(h1, id) {
            continue;
        }
        if let Kind::Text(t) = &dom.nodes[id].kind {
            seen += t.trim().len();
            if seen > HEADLINE_REACH {
                break;
            }
            continue;
        }
        if is_chrome(dom, id) || super::live::in_teaser(dom, id) {
            it.skip_children_of(id);
            continue;
        }
        if !date_classed(dom, id) {
            continue;
        }
        let Some(text) = dom.text_within(id, 400) else {
            continue;
        };
        if !written::is_range(&text)
            && let Some(d) = read.date(&text)
        {
            return Some(d);
        }
    }
    None
}

/// The first written date in a byline-like element (class or id naming a date,
/// time, byline...): just after the headline, then near the content, then in
/// the whole page.
pub(super) fn byline_date(
    dom: &Dom,
    m: &Meta,
    root: Option<NodeId>,
    read: &Reading,
) -> Option<NaiveDate> {
    if let Some(d) = headline(dom, m).and_then(|h| headline_byline(dom, h, read)) {
        return Some(d);
    }
    let scope = root.and_then(|r| dom.nodes[r].parent()).unwrap_or(0);
    for start in [scope, 0] {
        let mut it = dom.descendants(start);
        while let Some(id) = it.next() {
            if !dom.is_element(id) {
                continue;
            }
            // Comment times, related lists and sidebars date other things.
            if is_chrome(dom, id) {
                it.skip_children_of(id);
                continue;
            }
            if !date_classed(dom, id) {
                continue;
            }
            let text = dom.text(id);
            if dom.written_len(id) > 400
                || written::is_range(&text)
                || super::live::in_teaser(dom, id)
            {
                continue;
            }
            if let Some(d) = read.date(&text) {
                return Some(d);
            }
            it.skip_children_of(id);
        }
        if start == 0 {
            break;
        }
    }
    None
}
