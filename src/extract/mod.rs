//! Article extraction: bytes and a base URL in, a [`Page`] description out. Pure.
//!
//! The path of a page through this module:
//! [`charset`] (bytes to text) -> [`stream`] (streamed chunks moved into
//! place) -> [`prepass`] (drop scripts and comments, keep JSON-LD and
//! hydration payloads aside, cap nesting depth and size) -> [`dom`]
//! (html5ever into an arena tree) -> [`meta`] (meta tags, links, JSON-LD) ->
//! [`paywall`] (what the page says of free access) -> [`text`] (main text;
//! JSON-LD `articleBody`, a [`payload`] or the `<noscript>` markup when the
//! markup has none) -> [`title`],
//! [`date`], [`lang`], byline, article signal and prose ratio -> the
//! [`Rule`]. `render` turns a page into the `scraper extract` JSON object
//! and the `check-url` report.
//!
//! Nothing here does I/O, and nothing recurses on the tree, so deep or
//! hostile pages cannot overflow the stack (the payload and stream readers
//! recurse over JSON and nested chunks, to a fixed depth).

/// A set of element names as a function: `tag_set! { fn is_x: "a", "b" }`
/// makes `fn is_x(tag: &str) -> bool`, one `match` (a jump on the
/// length, then a comparison or two) where a list's `contains` would
/// compare every entry, for every element of a page.
macro_rules! tag_set {
    ($(#[$doc:meta])* fn $name:ident: $($tag:literal),+ $(,)?) => {
        $(#[$doc])*
        fn $name(tag: &str) -> bool {
            matches!(tag, $($tag)|+)
        }
    };
}

mod byline;
pub mod charset;
pub mod date;
pub mod dom;
pub mod lang;
pub mod meta;
pub mod payload;
pub mod paywall;
pub mod prepass;
pub mod record;
mod render;
pub mod stream;
pub mod text;
pub mod title;
pub mod version;

use chrono::NaiveDate;
use serde::Serialize;

use crate::record::DateSource;
use crate::relevance::{Relevance, Rule};
use crate::url::Url;

pub use render::to_json;

/// Everything the extractor decided about one page.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub title: Option<String>,
    /// Paragraphs separated by `\n`.
    pub text: String,
    /// The same text with its structure, as Markdown (headings, lists,
    /// quotes, code, tables, emphasis; links as text): `text` is its plain
    /// reading ([`text::markdown::plain`]).
    pub markdown: String,
    /// Publication day in the page's own time zone.
    pub date: Option<NaiveDate>,
    /// Where the date was found (see [`date`] for what each source means).
    pub date_source: Option<DateSource>,
    /// The day the page says it was last modified (`article:modified_time`,
    /// JSON-LD `dateModified`), if it says.
    pub date_modified: Option<NaiveDate>,
    pub lang: Option<String>,
    pub byline: Option<String>,
    pub canonical_url: Option<Url>,
    /// Carries an article signal and enough prose.
    pub is_article: bool,
    /// Which article signal was seen (`og_type`, `jsonld`, `dated_metadata`, `dated_url`), if any.
    pub article_signal: Option<&'static str>,
    pub prose_ratio: f64,
    pub relevance: Relevance,
    pub keywords: Vec<String>,
    /// Absolute, normalised http(s) links found in the page (document order, deduplicated).
    #[serde(skip)]
    pub links: Vec<Url>,
    /// Anchor text of each of `links`, same order (may be empty).
    #[serde(skip)]
    pub anchors: Vec<String>,
    /// `<link rel=alternate type=application/rss+xml|atom+xml>` feed URLs.
    #[serde(skip)]
    pub feeds: Vec<Url>,
    /// Values of `<meta name="robots">` and similar directives, lower-cased (`noindex`, `nofollow`, `noai`...).
    #[serde(skip)]
    pub robots_meta: Vec<String>,
    /// Meta tags that may carry AI-use signals, as (lower-cased name, content):
    /// `robots`, `tdm-reservation`, `tdm-policy`, names ending in `bot`, and any
    /// name whose content is only robots directives (`<meta name="<agent>" content="noai">`).
    #[serde(skip)]
    pub consent_meta: Vec<(String, String)>,
    /// The encoding the page was decoded with.
    pub charset: &'static str,
    /// Whether the nesting-depth guard had to flatten the page.
    pub depth_capped: bool,
    /// Parsing limits that cut the page (depth, nodes, text, links), if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<crate::record::ParseCap>,
    /// Whether the article is free to read: JSON-LD `isAccessibleForFree`,
    /// the `article:content_tier` meta, or paywall markup (then `false`);
    /// `None` when the page says nothing (see [`paywall`]).
    pub accessible_for_free: Option<bool>,
    /// The hidden or streamed parts read as the page's text: streamed chunks
    /// moved into place (`stream S:1 -> B:0`), hydration payloads
    /// (`payload next_data`), paywalled, hidden and slideshow parts
    /// (`paywall div.article-rest`).
    pub hidden_parts: Vec<String>,
    /// When paywalled parts were read: the text and Markdown without them
    /// (what a reader without a subscription sees), for
    /// `crawl.paywalled_text: flag`.
    #[serde(skip)]
    pub free_part: Option<(String, String)>,
}

/// Least words a paragraph needs to count as prose (fewer with sentence punctuation).
const PROSE_WORDS: usize = 20;
/// Least characters of a paragraph in a script written without spaces
/// (ending sentences with `。`) to count as prose.
const CJK_PROSE_CHARS: usize = 40;

/// Extract a page. `charset` is the HTTP Content-Type charset when known;
/// `url` is where the page came from; `today` bounds plausible dates.
pub fn extract(
    html: &[u8],
    charset: Option<&str>,
    url: Option<&Url>,
    rule: &Rule,
    today: NaiveDate,
) -> Page {
    let tld = url
        .and_then(|u| u.host_str())
        .and_then(|h| h.rsplit('.').next());
    // Only what the prepass would keep is decoded (a body may be twice that).
    let html = &html[..html.len().min(prepass::MAX_BYTES)];
    let (decoded, encoding) = charset::decode(html, charset, tld);
    let (spliced, streamed) = stream::splice(&decoded);
    let prepared = prepass::prepare_folding(&spliced);
    drop(spliced);
    drop(decoded);
    let dom = dom::Dom::parse_folded(&prepared.html, prepared.folded);
    let m = meta::gather(&dom, url, &prepared.jsonld);
    let cuts = parse_cuts(prepared.capped, &dom, &m);
    let anchor = title::anchor(&dom, &m);
    let walls = paywall::marks(&m);
    let content = text::extract_marked(&dom, anchor, &walls);
    let title = title::choose(&dom, &m, content.root);
    let mut hidden_parts: Vec<String> = streamed.iter().map(|s| format!("stream {s}")).collect();
    hidden_parts.extend(content.unhidden);
    let accessible_for_free = walls.declared.or(content.paywalled.then_some(false));
    let free_part = hidden_parts
        .iter()
        .any(|p| p.starts_with("paywall"))
        .then(|| {
            let free_only = paywall::Marks {
                free_only: true,
                ..walls.clone()
            };
            let free = text::extract_marked(&dom, anchor, &free_only);
            (
                free.paragraphs.join("\n"),
                text::markdown::render(&free.marks),
            )
        });

    let (mut paragraphs, mut marks) = (content.paragraphs, content.marks);
    if let Some(body) = jsonld_body(&m, &paragraphs) {
        marks = body.iter().map(|p| text::markdown::Mark::para(p)).collect();
        paragraphs = body;
        hidden_parts.push("jsonld articleBody".into());
    } else if let Some((body, kinds)) = payload_body(&prepared.payloads, &paragraphs) {
        paragraphs = body.paragraphs;
        marks = body.marks;
        hidden_parts.extend(kinds.iter().map(|k| format!("payload {k}")));
    } else if let Some(body) = noscript_body(&prepared.noscript, &paragraphs) {
        paragraphs = body.paragraphs;
        marks = body.marks;
        hidden_parts.push("noscript".into());
    }
    if let Some(t) = &title {
        let norm = |s: &str| meta::clean(s).to_lowercase();
        let tn = norm(t);
        if let Some(pos) = paragraphs
            .iter()
            .take(3)
            .position(|p| is_headline(&norm(p), &tn))
        {
            paragraphs.remove(pos);
            marks.remove(pos);
        }
    }
    let text = paragraphs.join("\n");
    let markdown = text::markdown::render(&marks);

    let page_url: Option<String> = url
        .map(|u| u.as_str().to_string())
        .or_else(|| m.canonical.as_ref().map(|u| u.as_str().to_string()))
        .or_else(|| m.get(&["og:url"]).map(str::to_string));
    let (date, date_source) = date::find(&dom, &m, page_url.as_deref(), content.root, &text, today);
    let date_modified = date::modified(&m, today);
    let lang = lang::detect(&text, m.html_lang.as_deref());
    let byline = byline::find(&dom, &m);

    let article_signal = article_signal(&m, date_source, page_url.as_deref());
    let prose_ratio = prose_ratio(&paragraphs);
    let is_article = article_signal.is_some()
        && prose_ratio >= rule.keywords.min_prose_ratio
        && !text.is_empty();
    let judge = rule.judge(lang.as_deref());
    let relevance = judge
        .evaluate(title.as_deref().unwrap_or(""), &text)
        .with_publisher(judge.publisher(&m.metas, &m.jsonld, page_url.as_deref()));
    let keywords = relevance.keywords();
    Page {
        title,
        text,
        markdown,
        date,
        date_source,
        date_modified,
        lang,
        byline,
        canonical_url: m.canonical,
        is_article,
        article_signal,
        prose_ratio,
        relevance,
        keywords,
        links: m.links,
        anchors: m.anchors,
        feeds: m.feeds,
        robots_meta: m.robots,
        consent_meta: consent_meta(&m.metas),
        charset: encoding.name(),
        depth_capped: prepared.capped,
        cuts,
        accessible_for_free,
        hidden_parts,
        free_part,
    }
}

/// Most words of a kicker glued to the headline ([`is_headline`]).
const KICKER_WORDS: usize = 4;
/// Least length of a headline of fewer than three words (a title written
/// without spaces) that a kicker may precede, weighed as [`weighted_len`].
const KICKER_TITLE_CHARS: usize = 30;

/// Is a paragraph (normalised) the headline `title`: the same text, or the
/// title after a kicker of at most [`KICKER_WORDS`] words set in the same
/// heading (`<h1><span>Exclusive</span><span>Title</span></h1>` reads
/// `ExclusiveTitle`, or `Exclusive: Title`).
fn is_headline(p: &str, title: &str) -> bool {
    if p == title {
        return true;
    }
    if title.split_whitespace().count() < 3 && weighted_len(title) < KICKER_TITLE_CHARS {
        return false;
    }
    p.strip_suffix(title).is_some_and(|kicker| {
        !kicker.trim().is_empty() && kicker.split_whitespace().count() <= KICKER_WORDS
    })
}

/// Length of a text for the thresholds on how much text a part holds: its
/// characters, with those of scripts written without spaces (Chinese,
/// Japanese, Korean), which say about as much as a short word each,
/// counted three times.
pub(crate) fn weighted_len(s: &str) -> usize {
    s.chars().map(|c| if is_cjk(c) { 3 } else { 1 }).sum()
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff)
}

/// [`prose_chars`] weighted as [`weighted_len`] weighs.
fn prose_weight(paragraphs: &[String]) -> usize {
    paragraphs
        .iter()
        .filter(|p| is_prose(p))
        .map(|p| weighted_len(p))
        .sum()
}

/// Characters of the paragraphs that read as prose (see [`prose_ratio`]).
fn prose_chars(paragraphs: &[String]) -> usize {
    paragraphs
        .iter()
        .filter(|p| is_prose(p))
        .map(|p| p.chars().count())
        .sum()
}

/// The text of the page's hydration payloads ([`payload::body`]) when the
/// markup holds almost no prose (a page its scripts build) and the
/// payloads hold much more.
fn payload_body(
    payloads: &[(payload::Kind, String)],
    paragraphs: &[String],
) -> Option<(text::Content, Vec<&'static str>)> {
    if payloads.is_empty() {
        return None;
    }
    let have = prose_weight(paragraphs);
    if have >= SCRIPT_BUILT_CHARS {
        return None;
    }
    let (html, kinds) = payload::body(payloads)?;
    let dom = dom::Dom::parse(&html);
    let anchor = title::anchor(&dom, &meta::gather(&dom, None, &[]));
    let content = text::extract(&dom, anchor);
    let got = prose_weight(&content.paragraphs);
    (got >= SCRIPT_BUILT_CHARS && got > have * 2).then_some((content, kinds))
}

/// The text of the page's `<noscript>` markup when the page itself holds
/// almost no prose (an application's empty mount point, with the posts
/// written for readers without scripts inside `<noscript>`) and the
/// markup holds much more.
fn noscript_body(noscript: &[String], paragraphs: &[String]) -> Option<text::Content> {
    if noscript.is_empty() {
        return None;
    }
    let have = prose_weight(paragraphs);
    if have >= SCRIPT_BUILT_CHARS {
        return None;
    }
    let joined: String = noscript.concat();
    let prepared = prepass::prepare(&format!("<body>{joined}</body>"));
    let dom = dom::Dom::parse(&prepared.html);
    let anchor = title::anchor(&dom, &meta::gather(&dom, None, &[]));
    let content = text::extract(&dom, anchor);
    let got = prose_weight(&content.paragraphs);
    (got >= SCRIPT_BUILT_CHARS && got > have * 2).then_some(content)
}

/// Which parsing limits cut the page.
fn parse_cuts(depth: bool, dom: &dom::Dom, m: &meta::Meta) -> Vec<crate::record::ParseCap> {
    use crate::record::ParseCap;
    let mut cuts: Vec<ParseCap> = dom.cut.into_iter().collect();
    if depth {
        cuts.push(ParseCap::Depth);
    }
    if m.links_cut {
        cuts.push(ParseCap::Links);
    }
    cuts
}

/// Longest page text (characters) that a JSON-LD `articleBody` may replace.
const SCRIPT_BUILT_CHARS: usize = 300;

/// The `articleBody` of the page's JSON-LD article, as paragraphs, when the
/// page's own markup yields almost no text (pages whose body a script
/// builds) and the JSON-LD holds much more.
fn jsonld_body(m: &meta::Meta, paragraphs: &[String]) -> Option<Vec<String>> {
    let have: usize = paragraphs.iter().map(|p| p.chars().count()).sum();
    if have >= SCRIPT_BUILT_CHARS {
        return None;
    }
    let body = m
        .articles()
        .find_map(|v| v.get("articleBody").and_then(serde_json::Value::as_str))?;
    // Some publishers put markup in the field; it is text to us.
    let text = if body.contains('<') {
        let dom = dom::Dom::parse(&format!("<body>{body}</body>"));
        text::extract(&dom, None).paragraphs.join("\n")
    } else {
        body.to_string()
    };
    let out: Vec<String> = text
        .lines()
        .map(meta::clean)
        .filter(|l| !l.is_empty())
        .collect();
    let got: usize = out.iter().map(|p| p.chars().count()).sum();
    (got > have * 2 && got >= SCRIPT_BUILT_CHARS).then_some(out)
}

/// Robots directive words: a meta tag whose content is only these may be addressed to a crawler.
const DIRECTIVES: &[&str] = &[
    "all",
    "none",
    "index",
    "noindex",
    "follow",
    "nofollow",
    "noarchive",
    "nocache",
    "nosnippet",
    "noimageindex",
    "notranslate",
    "noai",
    "noimageai",
];

fn consent_meta(metas: &[(String, String)]) -> Vec<(String, String)> {
    metas
        .iter()
        .filter(|(name, content)| {
            let words = || {
                content
                    .split([',', ' '])
                    .map(str::trim)
                    .filter(|w| !w.is_empty())
            };
            content.len() <= 512
                && (matches!(name.as_str(), "robots" | "tdm-reservation" | "tdm-policy")
                    || name.ends_with("bot")
                    || (words().next().is_some()
                        && words().all(|w| DIRECTIVES.contains(&w.to_ascii_lowercase().as_str()))))
        })
        .cloned()
        .collect()
}

fn article_signal(
    m: &meta::Meta,
    date_source: Option<DateSource>,
    url: Option<&str>,
) -> Option<&'static str> {
    if m.get(&["og:type"])
        .is_some_and(|t| t.trim().to_ascii_lowercase().starts_with("article"))
    {
        return Some("og_type");
    }
    if m.articles().next().is_some() {
        return Some("jsonld");
    }
    if date_source.is_some_and(DateSource::is_metadata) {
        return Some("dated_metadata");
    }
    if url.and_then(date::url_date).is_some() {
        return Some("dated_url");
    }
    None
}

/// Share of the text (in characters) that sits in paragraph-length blocks.
fn prose_ratio(paragraphs: &[String]) -> f64 {
    let total: usize = paragraphs.iter().map(|p| p.chars().count()).sum();
    if total == 0 {
        return 0.0;
    }
    prose_chars(paragraphs) as f64 / total as f64
}

/// Is a paragraph prose: long enough, or shorter and ending as a sentence?
/// Text written without spaces (Chinese, Japanese) counts by characters.
fn is_prose(p: &str) -> bool {
    let words = p.split_whitespace().count();
    if words < PROSE_WORDS && p.contains(['。', '！', '？']) {
        return p.chars().count() >= CJK_PROSE_CHARS;
    }
    words >= PROSE_WORDS
        || (words >= 10
            && p.trim_end()
                .ends_with(['.', '!', '?', '"', '\u{201d}', ':']))
}

#[cfg(test)]
mod consent_tests {
    use super::*;

    #[test]
    fn consent_meta_keeps_robots_agent_and_tdm_tags() {
        let html = br#"<html><head><title>T</title>
            <meta name="robots" content="index, noai">
            <meta name="Scraper" content="noimageai">
            <meta name="googlebot" content="nosnippet">
            <meta name="tdm-reservation" content="1">
            <meta name="tdm-policy" content="https://p.test/policy.json">
            <meta name="description" content="No AI here, none at all">
            <meta name="viewport" content="width=device-width">
            </head><body><p>x</p></body></html>"#;
        let rule = Rule::new(&crate::config::Keywords::default());
        let today = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap();
        let page = extract(html, None, None, &rule, today);
        let names: Vec<&str> = page.consent_meta.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "robots",
                "scraper",
                "googlebot",
                "tdm-reservation",
                "tdm-policy"
            ]
        );
        let mut s = crate::consent::Signals::default();
        s.meta(&page.consent_meta, "scraper");
        assert_eq!(
            s.labels(),
            [
                "meta:noai",
                "meta:noimageai",
                "tdm-meta:1;policy=https://p.test/policy.json"
            ]
        );
    }
}

#[cfg(test)]
mod selection_tests;
