//! Crawler traps, by general rules (no host names): URLs too long, with too
//! many query parameters, with a path segment repeated over and over, and
//! URL spaces generated from one pattern (calendars, faceted search, session
//! or sort variants) past a per-host cap. Pure: [`TrapRules::check`] looks at
//! one URL; [`PatternCount`] counts URLs per (host, pattern) for one run.
//!
//! A URL's *pattern* is its path with every digit-dominated segment replaced
//! by `#` (`/cal/2024/05` and `/cal/1999/12` are both `/cal/#/#`; an article
//! slug such as `/2024/05/02/openai-ships-a-model` keeps its words and so
//! stays its own pattern), plus a bare `?` when it has a query (every value
//! and key combination of `/search?...` is one space).
//!
//! The cap counts a URL with a query (every combination of facets, sorts and
//! searches is one space, however it was reached), and a URL without one only
//! when it was found on a page of the same host and pattern: such a trap is a
//! space that generates itself (a calendar month links the next month).
//! Stories with numeric ids in their path listed by a home or section page
//! (`/story/48213` linked from `/news`) are not counted, so a news site's
//! numbered stories are never capped by their number; the stories they link
//! among themselves are.
//!
//! Dates and percent signs have rules of their own, since a pattern cap lets a
//! chain run 25 steps: a link to a URL dated after tomorrow is never queued
//! (a calendar that runs into the future has nothing published there yet),
//! a chain of date pages (a day page linking the next day, an archive month
//! linking the next month) stops after `max_date_steps` steps per host and
//! pattern, and a URL with a run of literal percent signs (`%25%25`, what a
//! spiral of raw `%` normalises to) is refused. [`url_date`] reads the date a
//! URL carries; the clock is the caller's (`today` is passed in).
//!
//! A link refused here is counted in its host's `traps` and logged as a
//! `trap` event with its `kind` (`crawl.traps` holds the limits).

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};

use super::Url;

/// Which rule a URL broke (the `kind` of a `trap` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trap {
    /// Longer than `max_url_bytes`.
    TooLong,
    /// More query parameters than `max_query_params`.
    TooManyParams,
    /// One path segment more than `max_segment_repeats` times (`/a/b/a/b/a/b`).
    RepeatedSegment,
    /// Its (host, pattern) already gave `max_urls_per_pattern` URLs this run.
    PatternCap,
    /// Dated after tomorrow: a calendar running into the future.
    FutureDate,
    /// A date page linked from a date page of the same pattern, past
    /// `max_date_steps` such links per host and pattern this run.
    DateChain,
    /// A run of literal percent signs (`%25%25`, or more than two `%25`):
    /// a spiral of raw `%` that are not escapes.
    PercentSpiral,
}

impl Trap {
    pub fn as_str(self) -> &'static str {
        match self {
            Trap::TooLong => "too_long",
            Trap::TooManyParams => "too_many_params",
            Trap::RepeatedSegment => "repeated_segment",
            Trap::PatternCap => "pattern_cap",
            Trap::FutureDate => "future_date",
            Trap::DateChain => "date_chain",
            Trap::PercentSpiral => "percent_spiral",
        }
    }
}

/// The limits (`crawl.traps` in `config.yml`); 0 turns a rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapRules {
    pub(crate) max_url_bytes: usize,
    pub(crate) max_query_params: usize,
    pub(crate) max_segment_repeats: usize,
    pub max_urls_per_pattern: u32,
    /// Date pages linked from date pages of the same host and pattern, per
    /// run (a calendar day linking the next day).
    pub max_date_steps: u32,
}

impl Default for TrapRules {
    fn default() -> TrapRules {
        TrapRules {
            max_url_bytes: 2048,
            max_query_params: 10,
            max_segment_repeats: 2,
            max_urls_per_pattern: 25,
            max_date_steps: 5,
        }
    }
}

impl TrapRules {
    /// The rules that need only the URL itself.
    pub fn check(&self, url: &Url) -> Option<Trap> {
        if self.max_url_bytes > 0 && url.as_str().len() > self.max_url_bytes {
            return Some(Trap::TooLong);
        }
        if self.max_query_params > 0
            && url.query().is_some_and(|q| {
                q.split('&').filter(|p| !p.is_empty()).count() > self.max_query_params
            })
        {
            return Some(Trap::TooManyParams);
        }
        if self.max_segment_repeats > 0 && repeated_segment(url.path(), self.max_segment_repeats) {
            return Some(Trap::RepeatedSegment);
        }
        if percent_spiral(url) {
            return Some(Trap::PercentSpiral);
        }
        None
    }
}

/// Literal percent signs (`%25`) two in a row, or more than two in all: no
/// real page name has them; a spiral of raw `%` (normalised to `%25` by
/// [`crate::url::normalize`]) does.
fn percent_spiral(url: &Url) -> bool {
    let upper = url[::url::Position::BeforePath..].to_ascii_uppercase();
    upper.contains("%25%25") || upper.matches("%25").count() > 2
}

/// A date a URL carries, and whether it is a *date page* (a calendar or
/// archive page: the date ends the path, or sits in the query) rather than
/// an article under a dated path. Read from consecutive path segments
/// `YYYY/MM[/DD]`, or one segment or query value holding `YYYY-MM-DD`,
/// `YYYY_MM_DD`, `YYYY.MM.DD`, `YYYYMMDD` or `YYYY-MM`; a month alone means
/// its first day. Years 1900 to 2199 only.
pub(crate) fn url_date(url: &Url) -> Option<(NaiveDate, bool)> {
    let segs: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    for i in 0..segs.len() {
        let found = split_date(&segs[i..]).or_else(|| token_date(segs[i]).map(|d| (d, 1)));
        if let Some((d, used)) = found {
            return Some((d, i + used == segs.len()));
        }
    }
    url.query_pairs()
        .find_map(|(_, v)| token_date(&v).map(|d| (d, true)))
}

fn year(s: &str) -> Option<i32> {
    (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
        .filter(|y| (1900..2200).contains(y))
}

fn small(s: &str, max: u32) -> Option<u32> {
    ((1..=2).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
        .filter(|n| (1..=max).contains(n))
}

/// `YYYY/MM[/DD]` at the start of `segs`: the date and the segments it took.
fn split_date(segs: &[&str]) -> Option<(NaiveDate, usize)> {
    let y = year(segs.first()?)?;
    let m = small(segs.get(1)?, 12)?;
    if let Some(d) = segs.get(2).and_then(|s| small(s, 31)) {
        return NaiveDate::from_ymd_opt(y, m, d).map(|date| (date, 3));
    }
    NaiveDate::from_ymd_opt(y, m, 1).map(|date| (date, 2))
}

/// A date inside one segment or value: `2026-12-01`, `day-2026_12_01`, `20261201`, `2026-12`.
fn token_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    for start in 0..b.len() {
        if !b[start].is_ascii_digit() || (start > 0 && b[start - 1].is_ascii_digit()) {
            continue;
        }
        let run = b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
        let digits = &s[start..start + run];
        if run == 8 {
            let (y, m, d) = (&digits[..4], &digits[4..6], &digits[6..]);
            if let (Some(y), Some(m), Some(d)) = (year(y), small(m, 12), small(d, 31))
                && let Some(date) = NaiveDate::from_ymd_opt(y, m, d)
            {
                return Some(date);
            }
            continue;
        }
        let Some(y) = year(digits) else { continue };
        let tail = &s[start + 4..];
        let sep = tail.chars().next().filter(|c| matches!(c, '-' | '_' | '.'));
        let Some(sep) = sep else { continue };
        let mut parts = tail[1..].splitn(3, sep);
        let m = parts
            .next()
            .map(|p| p.split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""));
        let Some(m) = m.and_then(|m| small(m, 12)) else {
            continue;
        };
        let d = parts
            .next()
            .map(|p| p.split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""))
            .and_then(|d| small(d, 31));
        if let Some(date) = NaiveDate::from_ymd_opt(y, m, d.unwrap_or(1)) {
            return Some(date);
        }
    }
    None
}

/// Does any non-empty path segment occur more than `max` times?
fn repeated_segment(path: &str, max: usize) -> bool {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() <= max {
        return false;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    segs.iter().any(|s| {
        let c = counts.entry(s).or_default();
        *c += 1;
        *c > max
    })
}

/// The pattern of a URL's path and query (see the module doc).
pub fn pattern(url: &Url) -> String {
    let mut out = String::with_capacity(url.path().len());
    for seg in url.path().split('/').skip(1) {
        out.push('/');
        let digits = seg.bytes().filter(u8::is_ascii_digit).count();
        let letters = seg.bytes().filter(u8::is_ascii_alphabetic).count();
        if digits > 0 && digits >= letters {
            out.push('#');
        } else {
            out.push_str(seg);
        }
    }
    if url.query().is_some() {
        out.push('?');
    }
    out
}

/// A URL's family (see `crate::frontier::FamilyStats`): its path with the
/// first segment kept unless it is mostly digits (`#`), every later segment
/// `#` when mostly digits and `*` otherwise, and a bare `?` when it has a
/// query. `/tag/robots` and `/tag/chips` are `/tag/*`; `/archive/2024/05/17`
/// is `/archive/#/#/#`; `/2024/05/02/a-story` is `/#/#/#/*`.
pub fn family(url: &Url) -> String {
    let mut out = String::with_capacity(16);
    for (i, seg) in url.path().split('/').skip(1).enumerate() {
        out.push('/');
        let digits = seg.bytes().filter(u8::is_ascii_digit).count();
        let letters = seg.bytes().filter(u8::is_ascii_alphabetic).count();
        if digits > 0 && digits >= letters {
            out.push('#');
        } else if i == 0 || seg.is_empty() {
            out.push_str(seg);
        } else {
            out.push('*');
        }
    }
    if url.query().is_some() {
        out.push('?');
    }
    out
}

/// URLs admitted per (host, pattern) in this run, and date-page steps.
#[derive(Debug, Default)]
pub(crate) struct PatternCount {
    counts: HashMap<(String, u64), u32>,
    date_steps: HashMap<(String, u64), u32>,
}

impl PatternCount {
    /// The rules for a URL found by a link on the page `from`, run on
    /// `today`: a future date, a date chain, then the pattern cap (see the
    /// module doc). `None`: admitted (and counted).
    pub(crate) fn admit_link(
        &mut self,
        host: &str,
        url: &Url,
        from: &Url,
        rules: &TrapRules,
        today: NaiveDate,
    ) -> Option<Trap> {
        if let Some((date, date_page)) = url_date(url) {
            // A day of slack for publishers whose calendar is ahead of UTC.
            if date.num_days_from_ce() > today.num_days_from_ce() + 1 {
                return Some(Trap::FutureDate);
            }
            // Paths compared without their queries: `?view=week` of a day
            // page is a step of the same chain.
            let own = pattern(url);
            let own = own.trim_end_matches('?');
            let chain = date_page
                && rules.max_date_steps > 0
                && from.host_str() == url.host_str()
                && url_date(from).is_some_and(|(_, page)| page)
                && pattern(from).trim_end_matches('?') == own;
            if chain {
                let key = (host.to_string(), xxhash_rust::xxh3::xxh3_64(own.as_bytes()));
                let n = self.date_steps.entry(key).or_default();
                if *n >= rules.max_date_steps {
                    return Some(Trap::DateChain);
                }
                *n += 1;
            }
        }
        (!self.admit(host, url, from, rules.max_urls_per_pattern)).then_some(Trap::PatternCap)
    }

    /// Count `url`, found on the page `from`, under its host and pattern;
    /// `false` once the pattern already has `cap` URLs (it is then not
    /// counted). A URL without a query is counted only when found on a page
    /// of the same host and pattern (see the module doc). `cap` 0: no cap.
    pub(crate) fn admit(&mut self, host: &str, url: &Url, from: &Url, cap: u32) -> bool {
        if cap == 0 {
            return true;
        }
        let own = pattern(url);
        let same_space = from.host_str() == url.host_str() && pattern(from) == own;
        if url.query().is_none() && !same_space {
            return true;
        }
        let key = (host.to_string(), xxhash_rust::xxh3::xxh3_64(own.as_bytes()));
        let n = self.counts.entry(key).or_default();
        if *n >= cap {
            return false;
        }
        *n += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        crate::url::parse(s).unwrap()
    }

    #[test]
    fn patterns_fold_numbers_and_queries() {
        let table = [
            ("https://a.test/cal/2024/05", "/cal/#/#"),
            ("https://a.test/cal/2024-05-01", "/cal/#"),
            ("https://a.test/events/day-2024-05-01", "/events/#"),
            (
                "https://a.test/2024/05/02/openai-ships-a-model",
                "/#/#/#/openai-ships-a-model",
            ),
            ("https://a.test/news/story-12", "/news/story-12"),
            ("https://a.test/search?color=red&size=m", "/search?"),
            ("https://a.test/", "/"),
        ];
        for (url, want) in table {
            assert_eq!(pattern(&u(url)), want, "{url}");
        }
    }

    #[test]
    fn static_rules() {
        let r = TrapRules::default();
        assert_eq!(r.check(&u("https://a.test/a/b/c")), None);
        let long = format!("https://a.test/{}", "x".repeat(3000));
        assert_eq!(r.check(&u(&long)), Some(Trap::TooLong));
        let q: Vec<String> = (0..11).map(|i| format!("k{i}=v")).collect();
        let many = format!("https://a.test/s?{}", q.join("&"));
        assert_eq!(r.check(&u(&many)), Some(Trap::TooManyParams));
        let ten = format!("https://a.test/s?{}", q[..10].join("&"));
        assert_eq!(r.check(&u(&ten)), None);
        assert_eq!(
            r.check(&u("https://a.test/a/b/a/b/a/b")),
            Some(Trap::RepeatedSegment)
        );
        assert_eq!(r.check(&u("https://a.test/a/b/a/b")), None);
        let off = TrapRules {
            max_url_bytes: 0,
            max_query_params: 0,
            max_segment_repeats: 0,
            max_urls_per_pattern: 0,
            max_date_steps: 0,
        };
        assert_eq!(off.check(&u(&long)), None);
        assert_eq!(off.check(&u("https://a.test/a/a/a/a")), None);
    }

    #[test]
    fn families_generalise_numbers_and_slugs() {
        let cases = [
            ("https://a.test/", "/"),
            ("https://a.test/news", "/news"),
            ("https://a.test/tag/robots", "/tag/*"),
            ("https://a.test/tag/chips/page/2", "/tag/*/*/#"),
            ("https://a.test/archive/2024/05/17", "/archive/#/#/#"),
            ("https://a.test/2024/05/02/a-story", "/#/#/#/*"),
            ("https://a.test/go/119", "/go/#"),
            ("https://a.test/click?n=3&src=home", "/click?"),
        ];
        for (u, want) in cases {
            assert_eq!(family(&crate::url::parse(u).unwrap()), want, "{u}");
        }
    }

    #[test]
    fn pattern_cap_per_host() {
        let mut c = PatternCount::default();
        let month = u("https://a.test/cal/2023/12");
        for m in 1..=3 {
            let next = u(&format!("https://a.test/cal/2024/{m:02}"));
            assert!(c.admit("a.test", &next, &month, 3));
        }
        assert!(!c.admit("a.test", &u("https://a.test/cal/2024/04"), &month, 3));
        // Another host, another pattern: their own counts.
        let other = u("https://b.test/cal/2023/12");
        assert!(c.admit("b.test", &u("https://b.test/cal/2024/04"), &other, 3));
        let story = u("https://a.test/news/story-0");
        assert!(c.admit("a.test", &u("https://a.test/news/story-1"), &story, 3));
        assert!(c.admit("a.test", &u("https://a.test/cal/2024/04"), &month, 0));
    }

    #[test]
    fn pattern_cap_counts_only_a_space_that_links_itself() {
        let mut c = PatternCount::default();
        let section = u("https://a.test/news");
        // A section page listing a hundred numbered stories: none counted.
        for n in 1..=100 {
            let story = u(&format!("https://a.test/story/{n}"));
            assert!(c.admit("a.test", &story, &section, 3));
        }
        // Stories linking numbered stories: the same pattern, so counted.
        let story = u("https://a.test/story/1");
        for n in 101..=103 {
            assert!(c.admit(
                "a.test",
                &u(&format!("https://a.test/story/{n}")),
                &story,
                3
            ));
        }
        assert!(!c.admit("a.test", &u("https://a.test/story/104"), &story, 3));
        // The section page still lists the next story: not counted, admitted.
        assert!(c.admit("a.test", &u("https://a.test/story/105"), &section, 3));
        // A link from another host is never counted against this one.
        let elsewhere = u("https://b.test/story/1");
        assert!(c.admit("a.test", &u("https://a.test/story/106"), &elsewhere, 3));
        // A query space is counted however it is reached.
        for n in 1..=3 {
            let facet = u(&format!("https://a.test/shop?color={n}"));
            assert!(c.admit("a.test", &facet, &section, 3));
        }
        assert!(!c.admit("a.test", &u("https://a.test/shop?color=9"), &section, 3));
    }

    #[test]
    fn dates_in_urls() {
        let d = |y, m, dd| NaiveDate::from_ymd_opt(y, m, dd).unwrap();
        let table = [
            (
                "https://a.test/calendar/2026/12/01/",
                Some((d(2026, 12, 1), true)),
            ),
            ("https://a.test/cal/2024/05", Some((d(2024, 5, 1), true))),
            (
                "https://a.test/2024/05/02/openai-ships",
                Some((d(2024, 5, 2), false)),
            ),
            (
                "https://a.test/events/day-2026-12-03",
                Some((d(2026, 12, 3), true)),
            ),
            (
                "https://a.test/archive/20261203/",
                Some((d(2026, 12, 3), true)),
            ),
            (
                "https://a.test/events?date=2026_12_03&v=1",
                Some((d(2026, 12, 3), true)),
            ),
            ("https://a.test/story/48213", None),
            ("https://a.test/2024/13/40", None),
            ("https://a.test/p/123456789", None),
            ("https://a.test/year/2024", None),
        ];
        for (url, want) in table {
            assert_eq!(url_date(&u(url)), want, "{url}");
        }
    }

    #[test]
    fn future_dates_and_date_chains_stop_early() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let rules = TrapRules::default();
        let mut c = PatternCount::default();
        let day = |n: u32| u(&format!("https://a.test/calendar/2026/11/{n:02}/"));
        let home = u("https://a.test/");
        // Found on the home page: not a step of a chain.
        assert_eq!(c.admit_link("a.test", &day(1), &home, &rules, today), None);
        // Day pages linking the next day: max_date_steps of them.
        for n in 1..=rules.max_date_steps {
            assert_eq!(
                c.admit_link("a.test", &day(n + 1), &day(n), &rules, today),
                None
            );
        }
        let next = rules.max_date_steps + 2;
        assert_eq!(
            c.admit_link("a.test", &day(next), &day(next - 1), &rules, today),
            Some(Trap::DateChain)
        );
        // Tomorrow is allowed (time zones), the day after is not, from anywhere.
        let dec = |n: u32| u(&format!("https://b.test/calendar/2026/12/{n:02}/"));
        assert_eq!(
            c.admit_link("b.test", &dec(2), &dec(1), &rules, today),
            None
        );
        assert_eq!(
            c.admit_link("b.test", &dec(3), &home, &rules, today),
            Some(Trap::FutureDate)
        );
        let article = u("https://b.test/2027/01/05/a-story");
        assert_eq!(
            c.admit_link("b.test", &article, &home, &rules, today),
            Some(Trap::FutureDate)
        );
        // Articles under dated paths linking each other are no date chain.
        for n in 1..=10 {
            let a = u(&format!("https://c.test/2026/11/{n:02}/story-{n}"));
            let b = u(&format!(
                "https://c.test/2026/11/{:02}/story-{}",
                n + 1,
                n + 1
            ));
            assert_eq!(c.admit_link("c.test", &b, &a, &rules, today), None);
        }
    }

    #[test]
    fn percent_runs_are_a_spiral() {
        let r = TrapRules::default();
        for (url, trapped) in [
            ("https://a.test/pct/loop/%", false),
            ("https://a.test/pct/loop/%%", true),
            ("https://a.test/pct/loop/%%25%", true),
            ("https://a.test/sale/50%25-off", false),
            ("https://a.test/a%25b/c%25d", false),
            ("https://a.test/a%25b/c%25d/e%25f", true),
            ("https://a.test/s?q=100%25", false),
        ] {
            assert_eq!(
                r.check(&u(url)) == Some(Trap::PercentSpiral),
                trapped,
                "{url} -> {}",
                u(url)
            );
        }
    }
}
