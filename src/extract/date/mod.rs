//! Publication date of a page, and where it came from.
//!
//! Sources, in PRODUCT.md's order (with `meta`, `text_date` and
//! `image_url` added); the first plausible one wins and names itself in
//! `date_source`:
//!
//! | `date_source` | where |
//! |---|---|
//! | `published_time` | `article:published_time` and its relatives (`og:`, `itemprop=datePublished`) |
//! | `jsonld` | JSON-LD `datePublished` (article-typed objects first), then `dateCreated` |
//! | `meta` | publication-date `<meta>` names (`dc.date.issued`, `parsely-pub-date`...) |
//! | `time` | a `<time>` whose text is labelled as the publication, one marked `pubdate`/`datePublished` (while the marked times agree), or the first `<time datetime>` outside chrome |
//! | `meta` | generic date `<meta>` names (`date`, `dc.date`), which CMSs often set to the day a page changed |
//! | `url` | a date in the URL path (`/2024/03/04/`, `/2024-03-04-`, `/20240304/`, `/04-03-2024/`) |
//! | `byline` | a written date in a byline/date element (`March 4, 2024`, `4. März 2024`): just after the headline first, then near the content, comments and sidebars excluded |
//! | `text_date` | the first written date after the main heading, outside chrome (else the nearest one just above it); a date labelled as a change gives way to one labelled as the publication |
//! | `text_date` | a written date beside a link to the page itself (a list of recent posts that includes it) |
//! | `meta` | any other meta name for a publication or an upload, in a site's own vocabulary (`prism.publicationDate`, `…:uploaded`) |
//! | `image_url` | a date in the lead image's URL (`og:image`), its upload day |
//! | `text_date` | any written date on the page, chrome included |
//! | `text_year` | the largest plausible year in the text (as 1 January) |
//!
//! Three adjustments: when `published_time` and JSON-LD disagree by more
//! than a day, the one the page shows its readers wins; a story re-dated
//! within a week (the date shown by the headline, unlabelled, is the day of
//! its last change) takes the shown date; and a UTC time
//! (`...Z`) is moved to the publisher's day by an offset written elsewhere
//! on the page, or by a date one day off in the URL or a byline.
//!
//! A date is plausible when it is neither after `today` nor before 1995. The
//! day is the one written on the page, in the page's own time zone (no
//! conversion to UTC). Script and style content never reaches this module:
//! the pre-pass removed it.

use std::sync::LazyLock;

use chrono::{Datelike, NaiveDate};
use regex::Regex;

use super::dom::{Dom, NodeId};
use super::meta::{self, Meta};
use crate::record::DateSource;

mod live;
#[cfg(test)]
mod rule_tests;
mod visible;
use crate::date::written::SlashOrder;
use live::{in_teaser, live_start};
use visible::{
    Reading, byline_date, byline_dates, in_chrome_outside_article, scan_text, self_link_date,
    text_date,
};

/// Meta keys for `published_time`.
const PUBLISHED: &[&str] = &[
    "article:published_time",
    "og:published_time",
    "og:article:published_time",
    "article:published",
    "datepublished",
];
/// Other meta keys naming a publication date (`meta`).
const META_DATES: &[&str] = &[
    "parsely-pub-date",
    "sailthru.date",
    "publish-date",
    "publish_date",
    "publishdate",
    "published-date",
    "published_date",
    "publication_date",
    "publication-date",
    "pubdate",
    "dc.date.issued",
    "dcterms.issued",
    "citation_publication_date",
    "citation_date",
    "article.published",
    "originalpublicationdate",
    "og:pubdate",
    "release_date",
];
/// Generic date names (`date`, Dublin Core's `dc.date`): often the day a
/// CMS made or changed the page, so below a `<time>` in the article.
const WEAK_META_DATES: &[&str] = &[
    "dc.date.created",
    "dcterms.created",
    "dc.date",
    "dcterms.date",
    "date",
    "created",
    "datecreated",
];

/// Any other meta key naming a publication, first publication or upload
/// (`prism.publicationDate`, `cxenseparse:recs:publishtime`,
/// `five_hundred_pixels:uploaded`), but not a change or a publisher.
static PUBLICATION_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"publish|publication|pub.?date|upload|release.?date").expect("static regex")
});
static NOT_PUBLICATION_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"publisher|modif|updat|expir|revis|unix|type|principle|premium")
        .expect("static regex")
});

static URL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"/((?:199[5-9]|20[0-9]{2}))([/_-])([01]?[0-9])([/_-])([0-3]?[0-9])(?:[/_.-]|$)")
        .expect("static regex")
});
/// `/29-10-2021/`: day first, as some European sites write it.
static URL_DATE_DAY_FIRST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"/([0-3]?[0-9])[_.-]([01]?[0-9])[_.-]((?:199[5-9]|20[0-9]{2}))(?:[/_.-]|$)")
        .expect("static regex")
});
static URL_DATE_COMPACT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[/_-]((?:199[5-9]|20[0-9]{2}))([01][0-9])([0-3][0-9])(?:[/_.-]|$)")
        .expect("static regex")
});
static YEAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)(199[5-9]|20[0-9]{2})(?-u:\b)").expect("static regex"));
/// The chosen date and its source.
pub fn find(
    dom: &Dom,
    m: &Meta,
    url: Option<&str>,
    content_root: Option<NodeId>,
    text: &str,
    today: NaiveDate,
) -> (Option<NaiveDate>, Option<DateSource>) {
    let ok = |d: NaiveDate| plausible(d, today);
    let read = Reading {
        ok: &ok,
        order: slash_order(dom, m),
    };
    let from_meta = |keys: &[&str]| {
        keys.iter().find_map(|k| {
            m.metas
                .iter()
                .filter(|(name, _)| name == k)
                .find_map(|(_, v)| parse_machine(v).filter(|&d| ok(d)).map(|d| (d, v.clone())))
        })
    };
    let published = from_meta(PUBLISHED).map(|(d, raw)| (d, raw, DateSource::PublishedTime));
    let jsonld = jsonld_date(m, &ok).map(|(d, raw)| (d, raw, DateSource::Jsonld));
    // The date shown to readers, looked for once and only when needed.
    let shown = std::cell::OnceCell::new();
    let visible = || {
        *shown.get_or_init(|| {
            byline_date(dom, m, content_root, &read)
                .map(|d| (d, DateSource::Byline))
                .or_else(|| {
                    text_date(dom, m, content_root, &read).map(|d| (d, DateSource::TextDate))
                })
        })
    };
    // The two strongest machine sources disagreeing by more than a day: the
    // date the page shows its readers decides between them.
    let live = live_start(m, PUBLISHED, &ok);
    let is_live = live.is_some();
    let machine = match (published, jsonld) {
        _ if live.is_some() => live,
        (Some(p), Some(j)) if (p.0 - j.0).num_days().abs() > 1 => {
            let shown = visible().map(|(v, _)| v);
            Some(if shown == Some(j.0) { j } else { p })
        }
        (p, j) => p.or(j),
    };
    let machine = match machine {
        Some(found) if !is_live => Some(against_change(found, m, today, &visible, |d| {
            visible::labels_as_change(dom, d, &read)
        })),
        other => other,
    };
    let machine = machine
        .or_else(|| from_meta(META_DATES).map(|(d, raw)| (d, raw, DateSource::Meta)))
        .or_else(|| time_date(dom, m, &read).map(|(d, raw)| (d, raw, DateSource::Time)))
        .or_else(|| from_meta(WEAK_META_DATES).map(|(d, raw)| (d, raw, DateSource::Meta)));
    if let Some((d, raw, source)) = machine {
        // A UTC time may fall on another day in the publisher's own calendar:
        // the offset the page writes elsewhere decides the day; failing that,
        // a date one day apart in the URL or written on the page for readers
        // is the publisher's own.
        if is_utc(&raw) {
            if let Some(off) = page_offset(dom, m)
                && let Some(local) = shift_day(&raw, off).filter(|&l| ok(l))
            {
                return (Some(local), Some(source));
            }
            if let Some(u) = url.and_then(url_date)
                && (u - d).num_days().abs() == 1
            {
                return (Some(u), Some(DateSource::Url));
            }
            // Only when no byline on the page shows the machine's own day
            // (pages list other stories, or print today's date, nearby).
            if let Some((v, source)) = visible()
                && (v - d).num_days().abs() == 1
                && !byline_dates(dom, &read).contains(&d)
            {
                return (Some(v), Some(source));
            }
        }
        return (Some(d), Some(source));
    }
    if let Some(d) = url.and_then(url_date).filter(|&d| ok(d)) {
        return (Some(d), Some(DateSource::Url));
    }
    if let Some((d, source)) = visible() {
        return (Some(d), Some(source));
    }
    if let Some(d) = url.and_then(|u| self_link_date(dom, u, &read)) {
        return (Some(d), Some(DateSource::TextDate));
    }
    // A meta name of the site's own vocabulary that names a publication or
    // upload: less known than the names above, so after the page's text.
    if let Some(d) = m
        .metas
        .iter()
        .filter(|(k, _)| PUBLICATION_KEY.is_match(k) && !NOT_PUBLICATION_KEY.is_match(k))
        .find_map(|(_, v)| parse_machine(v).filter(|&d| ok(d)))
    {
        return (Some(d), Some(DateSource::Meta));
    }
    // The lead image's upload path (`/files/2016/05/04/`): when it was put
    // online with the page.
    if let Some(d) = m
        .get(&["og:image", "twitter:image"])
        .and_then(url_date)
        .filter(|&d| ok(d))
    {
        return (Some(d), Some(DateSource::ImageUrl));
    }
    // Any full date on the page, chrome included (teasers, sidebars), still
    // says more than a bare year.
    let body = dom.find("body").unwrap_or(0);
    if let Some(d) = scan_text(dom, body, body, 60_000, false, &read) {
        return (Some(d), Some(DateSource::TextDate));
    }
    let year = YEAR
        .captures_iter(text)
        .filter_map(|c| c[1].parse::<i32>().ok())
        .filter(|&y| y <= today.year())
        .max();
    if let Some(d) = year.and_then(|y| NaiveDate::from_ymd_opt(y, 1, 1)) {
        return (Some(d), Some(DateSource::TextYear));
    }
    (None, None)
}

/// The publication date weighed against the page's last change (never on
/// a live blog, whose changes are its entries).
///
/// A story re-dated within days shows its readers the new date: when the
/// date shown by the headline is the change's day, at most
/// [`REDATED_DAYS`] after the machine publication, and the page does not
/// label it as an update, the reader's date is the page's (the machine date
/// is the first draft's). An older page refreshed later keeps its first
/// publication, as do live blogs (never passed here).
/// (A modification before the publication is not read as the first
/// publication: sites re-stamp either, and the publication held on such
/// pages of the eval set.)
/// Most days between the machine publication and a re-dated story's change.
const REDATED_DAYS: i64 = 7;

fn against_change(
    found: (NaiveDate, String, DateSource),
    m: &Meta,
    today: NaiveDate,
    visible: &dyn Fn() -> Option<(NaiveDate, DateSource)>,
    labels_as_change: impl Fn(NaiveDate) -> bool,
) -> (NaiveDate, String, DateSource) {
    let Some(changed) = modified(m, today) else {
        return found;
    };
    let days = (changed - found.0).num_days();
    if (1..=REDATED_DAYS).contains(&days)
        && let Some((v, source)) = visible()
        && v == changed
        && !labels_as_change(v)
    {
        return (v, String::new(), source);
    }
    found
}

static OFFSET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d?(?:\.\d+)?)?\s*([+-])(\d\d):?(\d\d)$")
        .expect("static regex")
});
static TIME_OF_DAY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d{4}-\d\d-\d\d)[T ](\d\d):(\d\d)").expect("static regex"));

/// The first non-zero UTC offset (in minutes) written in a machine date on
/// the page: `<meta>` contents, `<time datetime>`, JSON-LD date fields.
fn page_offset(dom: &Dom, m: &Meta) -> Option<i64> {
    let parse = |raw: &str| {
        let c = OFFSET.captures(raw.trim())?;
        let mins = c[2].parse::<i64>().ok()? * 60 + c[3].parse::<i64>().ok()?;
        let mins = if &c[1] == "-" { -mins } else { mins };
        (mins != 0 && mins.abs() <= 14 * 60).then_some(mins)
    };
    let jsonld = m.jsonld.iter().flat_map(|v| {
        ["datePublished", "dateModified", "dateCreated", "uploadDate"]
            .into_iter()
            .filter_map(|k| v.get(k).and_then(meta::jsonld_text))
    });
    m.metas
        .iter()
        .find_map(|(_, v)| parse(v))
        .or_else(|| {
            m.times
                .iter()
                .filter_map(|t| dom.attr(t.0, "datetime"))
                .find_map(parse)
        })
        .or_else(|| jsonld.into_iter().find_map(|s| parse(&s)))
}

/// The calendar day of a UTC time of day seen at `offset` minutes from UTC.
fn shift_day(raw: &str, offset: i64) -> Option<NaiveDate> {
    let c = TIME_OF_DAY.captures(raw.trim())?;
    let d = NaiveDate::parse_from_str(&c[1], "%Y-%m-%d").ok()?;
    let mins = c[2].parse::<i64>().ok()? * 60 + c[3].parse::<i64>().ok()? + offset;
    Some(d + chrono::Duration::days(mins.div_euclid(24 * 60)))
}

/// Does a machine date carry a UTC time of day?
fn is_utc(raw: &str) -> bool {
    let r = raw.trim();
    r.len() > 10 && (r.ends_with('Z') || r.ends_with("+00:00") || r.ends_with("+0000"))
}

/// Meta keys naming the last modification.
const MODIFIED: &[&str] = &[
    "article:modified_time",
    "og:updated_time",
    "og:modified_time",
    "article:modified",
    "datemodified",
    "last-modified",
];

/// The day the page says it was last modified (its own calendar, as for
/// the publication date): `article:modified_time` and its relatives, then
/// JSON-LD `dateModified` (article-typed objects first).
pub fn modified(m: &Meta, today: NaiveDate) -> Option<NaiveDate> {
    let ok = |d: NaiveDate| plausible(d, today);
    let from_meta = m.get(MODIFIED).and_then(parse_machine).filter(|&d| ok(d));
    from_meta.or_else(|| {
        let typed = m.articles();
        let others = m.jsonld.iter().filter(|v| !meta::is_article(v));
        typed.chain(others).find_map(|v| {
            v.get("dateModified")
                .and_then(meta::jsonld_text)
                .and_then(|raw| parse_machine(&raw))
                .filter(|&d| ok(d))
        })
    })
}

fn plausible(d: NaiveDate, today: NaiveDate) -> bool {
    d <= today && d.year() >= 1995
}

fn jsonld_date(m: &Meta, ok: &dyn Fn(NaiveDate) -> bool) -> Option<(NaiveDate, String)> {
    let typed = m.articles();
    let others = m.jsonld.iter().filter(|v| !meta::is_article(v));
    for key in ["datePublished", "dateCreated"] {
        for v in typed.clone().chain(others.clone()) {
            if let Some(raw) = v.get(key).and_then(meta::jsonld_text)
                && let Some(d) = parse_machine(&raw).filter(|&d| ok(d))
            {
                return Some((d, raw));
            }
        }
    }
    None
}

fn time_date(dom: &Dom, m: &Meta, read: &Reading) -> Option<(NaiveDate, String)> {
    let ok = read.ok;
    // A `datetime` value is a machine's, whatever order it writes slashes
    // in; a `<time>`'s text is written for the page's readers.
    let parse_of = |id: NodeId, v: &str| {
        let order = match dom.attr(id, "datetime") {
            Some(_) => SlashOrder::Unknown,
            None => read.order,
        };
        parse_machine_in(v, order).filter(|&d| ok(d))
    };
    // A `<time>` whose text labels its own date as the publication
    // ("Publié le 29 juin 2019") is read by its text, whatever `datetime` says.
    let labelled = |id: NodeId| {
        let text = dom.text(id);
        crate::date::written::has_published_label(&text)
            .then(|| read.date(&text))
            .flatten()
    };
    // A teaser's time dates another story.
    let times: Vec<&(NodeId, String, bool)> =
        m.times.iter().filter(|t| !in_teaser(dom, t.0)).collect();
    if let Some(found) = times
        .iter()
        .find_map(|t| labelled(t.0).map(|d| (d, t.1.clone())))
    {
        return Some(found);
    }
    // A `pubdate` mark singles out the page's date only while the marked
    // times agree: on different days they are a listing's items.
    // (Teasers' marks count for that too.)
    let mut marked = m
        .times
        .iter()
        .filter(|t| t.2)
        .filter_map(|t| parse_of(t.0, &t.1).map(|d| (d, t.1.clone(), t.0)));
    if let Some(found) = marked.next()
        && marked.all(|(d, _, _)| d == found.0)
        && !in_teaser(dom, found.2)
    {
        return Some((found.0, found.1));
    }
    // Otherwise the first `<time datetime>` outside chrome; an `<aside>`
    // inside an `<article>` is that article's own (its meta box).
    times
        .iter()
        .filter(|t| dom.attr(t.0, "datetime").is_some() && !in_chrome_outside_article(dom, t.0))
        .find_map(|t| parse_of(t.0, &t.1).map(|d| (d, t.1.clone())))
}

/// A date written in a URL path.
pub fn url_date(url: &str) -> Option<NaiveDate> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let path = path.find("://").map_or(path, |i| &path[i + 3..]);
    // `/2024/03/04/` and `/2024-3-4-`: one separator throughout, so a
    // season such as `/2021-22/` is not read as a day.
    for c in URL_DATE.captures_iter(path) {
        if c[2] != c[4] {
            continue;
        }
        let (y, mo, d) = (c[1].parse().ok()?, c[3].parse().ok()?, c[5].parse().ok()?);
        if let Some(date) = NaiveDate::from_ymd_opt(y, mo, d) {
            return Some(date);
        }
    }
    if let Some(c) = URL_DATE_COMPACT.captures(path) {
        let (y, mo, d) = (c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?);
        if let Some(date) = NaiveDate::from_ymd_opt(y, mo, d) {
            return Some(date);
        }
    }
    if let Some(c) = URL_DATE_DAY_FIRST.captures(path) {
        let (d, mo, y) = (c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?);
        return NaiveDate::from_ymd_opt(y, mo, d);
    }
    None
}

/// Parse a machine-readable date: ISO 8601 / RFC 3339 / RFC 2822, taking the
/// day as written (the page's own offset).
pub fn parse_machine(s: &str) -> Option<NaiveDate> {
    parse_machine_in(s, SlashOrder::Unknown)
}

/// [`parse_machine`], reading a written date's slashes in `order`.
fn parse_machine_in(s: &str, order: SlashOrder) -> Option<NaiveDate> {
    let t = s.trim();
    if t.len() >= 10
        && let Some(d) = t.get(..10).and_then(|p| {
            NaiveDate::parse_from_str(p, "%Y-%m-%d")
                .or_else(|_| NaiveDate::parse_from_str(p, "%Y/%m/%d"))
                .ok()
        })
    {
        return Some(d);
    }
    if t.len() == 8 && t.bytes().all(|b| b.is_ascii_digit()) {
        return NaiveDate::parse_from_str(t, "%Y%m%d").ok();
    }
    if let Some(d) = crate::date::parse_datetime(t) {
        return Some(d.date_naive());
    }
    crate::date::written::parse_text_in(t, order)
}

/// The page's order of day and month in slash dates: what its own
/// unambiguous slash dates show, else its locale (`<html lang>`,
/// `og:locale`).
fn slash_order(dom: &Dom, m: &Meta) -> SlashOrder {
    let texts = (0..dom.nodes.len()).filter_map(|id| match &dom.nodes[id].kind {
        super::dom::Kind::Text(t) if dom.text_len(id) < 300 => Some(&t[..]),
        _ => None,
    });
    match SlashOrder::of_dates(texts) {
        SlashOrder::Unknown => {
            let locale = |l: &str| SlashOrder::of_locale(l);
            let by_html = m.html_lang.as_deref().map_or(SlashOrder::Unknown, locale);
            match by_html {
                SlashOrder::Unknown => m.get(&["og:locale"]).map_or(SlashOrder::Unknown, locale),
                known => known,
            }
        }
        known => known,
    }
}

pub use crate::date::written::{parse_labelled, parse_text};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_dates_table() {
        let table = [
            ("https://a.test/2024/03/04/slug", Some("2024-03-04")),
            ("https://a.test/news/2024-3-4-slug", Some("2024-03-04")),
            ("https://a.test/p/20240304/slug", Some("2024-03-04")),
            ("https://a.test/meldungen/29-10-2021", Some("2021-10-29")),
            // Year and month only, a season, a month run into a day.
            ("https://a.test/2016/12/python-360.html", None),
            ("https://a.test/liga/2021-22/transfers/x", None),
            ("https://a.test/2016/12-3/x", None),
        ];
        for (url, want) in table {
            let got = url_date(url).map(|d| d.to_string());
            assert_eq!(got.as_deref(), want, "{url}");
        }
    }

    #[test]
    fn utc_time_takes_the_publishers_day() {
        assert_eq!(
            shift_day("2021-11-04T23:00Z", 60),
            NaiveDate::from_ymd_opt(2021, 11, 5)
        );
        assert_eq!(
            shift_day("2023-11-09T06:35:29+00:00", -8 * 60),
            NaiveDate::from_ymd_opt(2023, 11, 8)
        );
        assert_eq!(
            shift_day("2023-11-09T12:00:00Z", -5 * 60),
            NaiveDate::from_ymd_opt(2023, 11, 9)
        );
    }
}
