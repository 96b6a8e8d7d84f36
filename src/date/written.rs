//! Dates written for people: `March 4, 2024`, `4 Mar 2024`, `4. März 2024`,
//! `2024-03-04`, `04.03.2024`, and `04/03/2024` only when unambiguous.
//!
//! Month names are known in English, German, French, Spanish, Italian, Dutch
//! and Portuguese (and several more: see `MONTHS`); Chinese, Japanese and
//! Korean dates are written with year, month and day signs. The first date found in the text is returned.

use std::sync::LazyLock;

use chrono::NaiveDate;
use regex::Regex;

use crate::gated::{Gated, has_year, may_have_letter};

/// (name prefix, month). Matching uses the lower-cased word; a name matches
/// when the word starts with the prefix and is at most the full name's length.
const MONTHS: &[(&str, u32)] = &[
    ("january", 1),
    ("jan", 1),
    ("januar", 1),
    ("janvier", 1),
    ("enero", 1),
    ("gennaio", 1),
    ("januari", 1),
    ("janeiro", 1),
    ("jänner", 1),
    ("february", 2),
    ("feb", 2),
    ("februar", 2),
    ("février", 2),
    ("fevrier", 2),
    ("febrero", 2),
    ("febbraio", 2),
    ("februari", 2),
    ("fevereiro", 2),
    ("févr", 2),
    ("march", 3),
    ("mar", 3),
    ("märz", 3),
    ("maerz", 3),
    ("mars", 3),
    ("marzo", 3),
    ("maart", 3),
    ("março", 3),
    ("mär", 3),
    ("april", 4),
    ("apr", 4),
    ("avril", 4),
    ("abril", 4),
    ("aprile", 4),
    ("may", 5),
    ("mai", 5),
    ("mayo", 5),
    ("maggio", 5),
    ("mei", 5),
    ("maio", 5),
    ("june", 6),
    ("jun", 6),
    ("juni", 6),
    ("juin", 6),
    ("junio", 6),
    ("giugno", 6),
    ("junho", 6),
    ("july", 7),
    ("jul", 7),
    ("juli", 7),
    ("juillet", 7),
    ("julio", 7),
    ("luglio", 7),
    ("julho", 7),
    ("juil", 7),
    ("august", 8),
    ("aug", 8),
    ("août", 8),
    ("aout", 8),
    ("agosto", 8),
    ("augustus", 8),
    ("september", 9),
    ("sep", 9),
    ("sept", 9),
    ("septembre", 9),
    ("septiembre", 9),
    ("settembre", 9),
    ("setembro", 9),
    ("october", 10),
    ("oct", 10),
    ("oktober", 10),
    ("octobre", 10),
    ("octubre", 10),
    ("ottobre", 10),
    ("outubro", 10),
    ("okt", 10),
    ("november", 11),
    ("nov", 11),
    ("novembre", 11),
    ("noviembre", 11),
    ("novembro", 11),
    ("december", 12),
    ("dec", 12),
    ("dezember", 12),
    ("décembre", 12),
    ("decembre", 12),
    ("diciembre", 12),
    ("dicembre", 12),
    ("dezembro", 12),
    ("dez", 12),
    ("déc", 12),
    // Romanian.
    ("ianuarie", 1),
    ("februarie", 2),
    ("martie", 3),
    ("aprilie", 4),
    ("iunie", 6),
    ("iulie", 7),
    ("septembrie", 9),
    ("octombrie", 10),
    ("noiembrie", 11),
    ("decembrie", 12),
    // Polish (genitive, as dates write them).
    ("stycznia", 1),
    ("lutego", 2),
    ("marca", 3),
    ("kwietnia", 4),
    ("maja", 5),
    ("czerwca", 6),
    ("lipca", 7),
    ("sierpnia", 8),
    ("września", 9),
    ("października", 10),
    ("listopada", 11),
    ("grudnia", 12),
    // Czech (genitive).
    ("ledna", 1),
    ("února", 2),
    ("března", 3),
    ("dubna", 4),
    ("května", 5),
    ("června", 6),
    ("července", 7),
    ("srpna", 8),
    ("září", 9),
    ("října", 10),
    ("listopadu", 11),
    ("prosince", 12),
    // Swedish, Danish, Norwegian.
    ("maj", 5),
    ("augusti", 8),
    ("desember", 12),
];

const MONTH_WORD: &str = r"([^\W\d_]{3,12})";

// Gates (see `crate::gated`): the month-name forms need a year and a
// letter of the month's name, ISO and numeric forms a year, CJK a year sign.
static DAY_MONTH_YEAR: Gated = Gated::new(year_and_letter, || {
    Regex::new(&format!(
        r"\b([0-3]?\d)(?:st|nd|rd|th|er|º)?\.?\s*(?:de\s+|of\s+)?{MONTH_WORD}\.?,?\s*(?:de\s+)?((?:19|20)\d\d)\b"
    ))
    .expect("static regex")
});
static MONTH_DAY_YEAR: Gated = Gated::new(year_and_letter, || {
    Regex::new(&format!(
        r"\b{MONTH_WORD}\.?\s+([0-3]?\d)(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)\b"
    ))
    .expect("static regex")
});
static ISO: Gated = Gated::new(has_year, || {
    Regex::new(r"\b((?:19|20)\d\d)[-/.]([01]?\d)[-/.]([0-3]?\d)(?:\D|$)").expect("static regex")
});
static NUMERIC: Gated = Gated::new(has_year, || {
    Regex::new(r"\b([0-3]?\d)([./-]|\s\|\s)([0-3]?\d)([./-]|\s\|\s)((?:19|20)\d\d)\b")
        .expect("static regex")
});

/// `2024年3月4日` (Chinese, Japanese) and `2024년 3월 4일` (Korean).
static CJK: Gated = Gated::new(
    |t| t.contains('年') || t.contains('년'),
    || {
        Regex::new(r"(?:^|\D)((?:19|20)\d\d)\s*[年년]\s*([01]?\d)\s*[月월]\s*([0-3]?\d)\s*[日일]")
            .expect("static regex")
    },
);

fn year_and_letter(t: &str) -> bool {
    has_year(t) && may_have_letter(t)
}

/// `dd.mm.yy`, a two-digit year (used only when no full date is written).
/// Gate (see `crate::gated`): two dots between digits (`\d` is within
/// `char::is_numeric`).
static SHORT_YEAR: Gated = Gated::new(
    |t| dots_between_digits(t) >= 2,
    || {
        Regex::new(r"(?:^|[^\d.])([0-3]?\d)\.([01]?\d)\.(\d\d)(?:[^\d.]|\.?$|\.\s)")
            .expect("static regex")
    },
);

/// How many dots of `t` stand between two digits (at most 2 counted).
fn dots_between_digits(t: &str) -> usize {
    let mut n = 0;
    let mut prev = [' ', ' '];
    for c in t.chars() {
        if prev[0].is_numeric() && prev[1] == '.' && c.is_numeric() {
            n += 1;
            if n == 2 {
                break;
            }
        }
        prev = [prev[1], c];
    }
    n
}

fn month(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    MONTHS
        .iter()
        .find(|(name, _)| w == *name)
        .or_else(|| {
            // Full names written out beyond a known abbreviation ("Sept", "Septem...").
            MONTHS
                .iter()
                .find(|(name, _)| name.len() >= 3 && w.starts_with(name) && w.len() <= 9)
        })
        .map(|&(_, m)| m)
}

/// The first human-written date in `text`.
pub fn parse_text(text: &str) -> Option<NaiveDate> {
    first_date(text).map(|(_, d)| d)
}

/// [`parse_text`] in the page's slash order.
pub fn parse_text_in(text: &str, order: SlashOrder) -> Option<NaiveDate> {
    first_date_in(text, order).map(|(_, d)| d)
}

/// How a page orders day and month in a date written with slashes
/// (`04/03/2024`): unknown (such a date is then not read), day first (most
/// of the world) or month first (the United States).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlashOrder {
    #[default]
    Unknown,
    DayFirst,
    MonthFirst,
}

impl SlashOrder {
    /// The order a locale writes (`en-US`, `en_GB`, `de-DE`, `fr`): month
    /// first in American English, unknown in English of no region, day first
    /// in any other English and in the other languages that write dates
    /// with slashes; unknown for the languages that put the year first.
    pub fn of_locale(locale: &str) -> SlashOrder {
        let l = locale.trim().to_ascii_lowercase().replace('_', "-");
        let (lang, region) = l.split_once('-').unwrap_or((&l, ""));
        match (lang, region) {
            ("", _) | ("ja" | "zh" | "ko" | "hu" | "lt" | "mn", _) => SlashOrder::Unknown,
            ("en", "us") => SlashOrder::MonthFirst,
            ("en", "") => SlashOrder::Unknown,
            _ => SlashOrder::DayFirst,
        }
    }

    /// The order the page's own unambiguous slash dates show (`25/03/2024`
    /// is day first, `03/25/2024` month first), when they agree.
    pub fn of_dates<'a>(texts: impl Iterator<Item = &'a str>) -> SlashOrder {
        let (mut day, mut month) = (0usize, 0usize);
        for t in texts {
            if !t.contains('/') {
                continue;
            }
            for c in NUMERIC.captures_iter(t) {
                if &c[2] != "/" || c[2] != c[4] {
                    continue;
                }
                let (Ok(a), Ok(b)) = (c[1].parse::<u32>(), c[3].parse::<u32>()) else {
                    continue;
                };
                match (a > 12 && b <= 12, b > 12 && a <= 12) {
                    (true, _) => day += 1,
                    (_, true) => month += 1,
                    _ => {}
                }
            }
        }
        match (day, month) {
            (0, 0) => SlashOrder::Unknown,
            (_, 0) => SlashOrder::DayFirst,
            (0, _) => SlashOrder::MonthFirst,
            _ => SlashOrder::Unknown,
        }
    }
}

/// The first human-written date in `text` and the byte offset it starts at.
pub fn first_date(text: &str) -> Option<(usize, NaiveDate)> {
    first_date_in(text, SlashOrder::Unknown)
}

/// [`first_date`], reading a slash date whose order is ambiguous in the
/// page's `order`.
pub fn first_date_in(text: &str, order: SlashOrder) -> Option<(usize, NaiveDate)> {
    // Every form has digits: most text has none, and is done at once.
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut best: Option<(usize, NaiveDate)> = None;
    let mut consider = |pos: usize, d: Option<NaiveDate>| {
        if let Some(d) = d
            && best.is_none_or(|(p, _)| pos < p)
        {
            best = Some((pos, d));
        }
    };
    // A date inside a web address written out in the text (a cited link,
    // `example.org/2019/07/19/slug`) is the address's, not written for
    // readers: the first match outside one counts.
    let written = |m: &regex::Match| !in_web_address(text, m.start());
    if let Some(c) = DAY_MONTH_YEAR
        .captures_iter(text)
        .find(|c| c.get(0).is_some_and(|m| written(&m)))
    {
        let d = month(&c[2]).and_then(|m| ymd(&c[3], m, &c[1]));
        consider(c.get(0).map_or(0, |m| m.start()), d);
    }
    if let Some(c) = MONTH_DAY_YEAR
        .captures_iter(text)
        .find(|c| c.get(0).is_some_and(|m| written(&m)))
    {
        let d = month(&c[1]).and_then(|m| ymd(&c[3], m, &c[2]));
        consider(c.get(0).map_or(0, |m| m.start()), d);
    }
    if let Some(c) = ISO
        .captures_iter(text)
        .find(|c| c.get(0).is_some_and(|m| written(&m)))
    {
        let d = c[2].parse().ok().and_then(|m| ymd(&c[1], m, &c[3]));
        consider(c.get(0).map_or(0, |m| m.start()), d);
    }
    if let Some(c) = CJK.captures(text) {
        let d = c[2].parse().ok().and_then(|m| ymd(&c[1], m, &c[3]));
        consider(c.get(1).map_or(0, |m| m.start()), d);
    }
    if let Some((at, d)) = numeric_date(text, order) {
        consider(at, Some(d));
    }
    if best.is_none() {
        return short_year_date(text);
    }
    best
}

/// The first `dd.mm.yyyy`, `dd-mm-yyyy` or slash date outside a web
/// address, a slash date whose order is ambiguous read in `order`.
fn numeric_date(text: &str, order: SlashOrder) -> Option<(usize, NaiveDate)> {
    for c in NUMERIC.captures_iter(text) {
        if c[2] != c[4] || c.get(0).is_some_and(|m| in_web_address(text, m.start())) {
            continue;
        }
        let (a, b): (u32, u32) = match (c[1].parse(), c[3].parse()) {
            (Ok(a), Ok(b)) => (a, b),
            _ => continue,
        };
        // `.` and `-` are day-first; `/` only when the order is unambiguous
        // (one part above 12, or both the same).
        let (day, mon) = if &c[2] != "/" || a > 12 || a == b {
            (a, b)
        } else if b > 12 {
            (b, a)
        } else {
            match order {
                SlashOrder::DayFirst => (a, b),
                SlashOrder::MonthFirst => (b, a),
                SlashOrder::Unknown => continue,
            }
        };
        let d = c[5]
            .parse()
            .ok()
            .and_then(|y| NaiveDate::from_ymd_opt(y, mon, day));
        // Not a day (`12.31.2020` written day first): a later one may be.
        if d.is_none() {
            continue;
        }
        return d.map(|d| (c.get(0).map_or(0, |m| m.start()), d));
    }
    None
}

/// `dd.mm.yy`, a two-digit year (read only when no full date is written).
fn short_year_date(text: &str) -> Option<(usize, NaiveDate)> {
    let c = SHORT_YEAR.captures(text)?;
    let yy: i32 = c[3].parse().ok()?;
    let y = if yy >= 95 { 1900 + yy } else { 2000 + yy };
    let d = NaiveDate::from_ymd_opt(y, c[2].parse().ok()?, c[1].parse().ok()?)?;
    Some((c.get(1).map_or(0, |m| m.start()), d))
}

/// Is the byte at `at` inside a web address written in the text: a
/// whitespace-free token with a scheme, a `www.` or a host name followed by
/// a path (`example.org/2019/07/19/`)?
fn in_web_address(text: &str, at: usize) -> bool {
    let start = text[..at]
        .char_indices()
        .rfind(|&(_, c)| c.is_whitespace() || matches!(c, '(' | '<' | '"' | '\''))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let token = &text[start..at];
    if token.contains("://") || token.starts_with("www.") {
        return true;
    }
    // A host name (`name.tld`) right before the first slash of the token.
    token.find('/').is_some_and(|slash| {
        let host = &token[..slash];
        host.rsplit_once('.').is_some_and(|(name, tld)| {
            !name.is_empty()
                && tld.len() >= 2
                && tld.bytes().all(|b| b.is_ascii_alphabetic())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        })
    })
}

/// A label naming the publication date ("Erschienen am:", "Published on").
static PUBLISHED_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(erschienen|veröffentlicht|publiziert|published|publicado|publié|pubblicato|opublikowano|gepubliceerd)(\s+(am|on|el|le|il|op))?\s*:?\s*")
        .expect("static regex")
});

/// A period: "vom 24. April bis 2. Oktober 2017", "from May 1 to June 3, 2024".
static RANGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(vom|von|from|du|del|dal|od)\s+\S.{0,30}?\s(bis|to|until|till|au|al|do)\s+\S",
    )
    .expect("static regex")
});

/// Does the text give a period (an event's dates) rather than one day?
pub fn is_range(text: &str) -> bool {
    RANGE.is_match(text)
}

/// Does the text carry a publication label?
pub fn has_published_label(text: &str) -> bool {
    PUBLISHED_LABEL.is_match(text)
}

/// Characters after a label in which its date must start.
const LABEL_REACH: usize = 40;

/// The date a publication label points at, else the first date in `text`:
/// a footer reading "Last changed: 31.10.2023, published: 01.11.2023" gives
/// the first of November.
pub fn parse_labelled(text: &str) -> Option<NaiveDate> {
    parse_labelled_in(text, SlashOrder::Unknown)
}

/// [`parse_labelled`] in the page's slash order.
pub fn parse_labelled_in(text: &str, order: SlashOrder) -> Option<NaiveDate> {
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    PUBLISHED_LABEL
        .find_iter(text)
        .find_map(|m| {
            let rest = &text[m.end()..];
            let cut = rest.floor_char_boundary(LABEL_REACH);
            parse_text_in(&rest[..cut], order)
        })
        .or_else(|| parse_text_in(text, order))
}

fn ymd(y: &str, m: u32, d: &str) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(y.parse().ok()?, m, d.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_year_gate_passes_every_short_date() {
        for t in [
            "05.03.20",
            "1.1.99.",
            "Am 5.3.21 um 10 Uhr",
            "x 31.12.07. Y",
            "٠٥.٠٣.٢٠",
            "12.5.2020 und 3.4.21",
        ] {
            assert!(SHORT_YEAR.holds(t), "{t}");
        }
        assert!(SHORT_YEAR.is_match("Am 5.3.21 um"));
        assert!(!SHORT_YEAR.is_match("Version 2.5 and 3.1"));
        assert_eq!(dots_between_digits("a 1.2 b"), 1);
    }

    #[test]
    fn a_publication_label_beats_an_earlier_change_date() {
        let t = "Letzte Änderung: 31.10.2023 - 14:49:39 Erschienen am: 01.11.2023 Lesungen: 61";
        assert_eq!(
            parse_labelled(t).map(|d| d.to_string()).as_deref(),
            Some("2023-11-01")
        );
        let t = "Updated 5 May 2023; first published on 1 April 2023";
        assert_eq!(
            parse_labelled(t).map(|d| d.to_string()).as_deref(),
            Some("2023-04-01")
        );
        assert_eq!(
            parse_labelled("4 Mar 2024")
                .map(|d| d.to_string())
                .as_deref(),
            Some("2024-03-04")
        );
    }

    #[test]
    fn periods_are_recognised() {
        assert!(is_range(
            "Der Tunnel wird vom 24. April bis 2. Oktober 2017 gesperrt."
        ));
        assert!(is_range("Open from May 1 to June 3, 2024"));
        assert!(!is_range("Published 4 March 2024 by the team"));
        assert!(!is_range("From the archive: 4 March 2024"));
    }

    #[test]
    fn written_dates_table() {
        let table = [
            ("Published March 4, 2024 at 10am", Some("2024-03-04")),
            ("4 Mar 2024", Some("2024-03-04")),
            ("Mar. 4th, 2024", Some("2024-03-04")),
            ("4. März 2024", Some("2024-03-04")),
            ("le 4 mars 2024", Some("2024-03-04")),
            ("4 de marzo de 2024", Some("2024-03-04")),
            ("2024-03-04T10:00:00Z", Some("2024-03-04")),
            ("04.03.2024", Some("2024-03-04")),
            ("13/03/2024", Some("2024-03-13")),
            ("03/13/2024", Some("2024-03-13")),
            ("05/28/2025", Some("2025-05-28")),
            ("31.13.2020, then 04.03.2024", Some("2024-03-04")),
            ("04/03/2024", None),
            ("08/08/2017", Some("2017-08-08")),
            ("Party, 30.10.23", Some("2023-10-30")),
            ("Klaus, 8.5.12 ", Some("2012-05-08")),
            ("version 1.2.3.4", None),
            ("Sept. 9, 2021", Some("2021-09-09")),
            ("20 septembrie 2020", Some("2020-09-20")),
            ("4 października 2021", Some("2021-10-04")),
            ("26 | 01 | 2022", Some("2022-01-26")),
            ("2020年07月12日", Some("2020-07-12")),
            ("投稿日 2020年7月1日(水)", Some("2020-07-01")),
            ("2019년 3월 4일 오전", Some("2019-03-04")),
            ("12020年1月1日", None),
            ("no date here 2024", None),
            (
                "Updated 5 May 2023; first published 1 April 2023",
                Some("2023-05-05"),
            ),
            // Dates in web addresses written out are the addresses'.
            ("see example.org/2019/07/19/slug", None),
            ("at https://a.test/news/19-07-2019/x", None),
            ("www.a.test/2019-07-19-post", None),
            ("blog.a.test/2019/07/19/x, 4 March 2024", Some("2024-03-04")),
            ("Berlin/2019-07-19: talks resume", Some("2019-07-19")),
            ("Berlin,\u{a0}19.07.2019", Some("2019-07-19")),
        ];
        for (text, want) in table {
            let got = parse_text(text).map(|d| d.to_string());
            assert_eq!(got.as_deref(), want, "{text}");
        }
    }

    #[test]
    fn slash_dates_read_in_the_pages_order() {
        assert_eq!(SlashOrder::of_locale("en-US"), SlashOrder::MonthFirst);
        assert_eq!(SlashOrder::of_locale("en_GB"), SlashOrder::DayFirst);
        assert_eq!(SlashOrder::of_locale("pt-BR"), SlashOrder::DayFirst);
        assert_eq!(SlashOrder::of_locale("fr"), SlashOrder::DayFirst);
        assert_eq!(SlashOrder::of_locale("en"), SlashOrder::Unknown);
        assert_eq!(SlashOrder::of_locale("ja-JP"), SlashOrder::Unknown);
        let texts = ["Posted 04/03/2024", "Most read: 25/02/2024"];
        assert_eq!(
            SlashOrder::of_dates(texts.into_iter()),
            SlashOrder::DayFirst
        );
        let texts = ["Posted 04/03/2024", "Most read: 02/25/2024"];
        assert_eq!(
            SlashOrder::of_dates(texts.into_iter()),
            SlashOrder::MonthFirst
        );
        let texts = ["25/02/2024", "02/25/2024", "04/03/2024"];
        assert_eq!(SlashOrder::of_dates(texts.into_iter()), SlashOrder::Unknown);
        let day = |o| parse_text_in("04/03/2024", o).map(|d| d.to_string());
        assert_eq!(day(SlashOrder::DayFirst).as_deref(), Some("2024-03-04"));
        assert_eq!(day(SlashOrder::MonthFirst).as_deref(), Some("2024-04-03"));
        assert_eq!(day(SlashOrder::Unknown), None);
        // Dots and dashes stay day first whatever the order.
        let d = parse_text_in("04.03.2024", SlashOrder::MonthFirst).map(|d| d.to_string());
        assert_eq!(d.as_deref(), Some("2024-03-04"));
    }
}
