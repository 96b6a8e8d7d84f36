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

use std::collections::HashMap;

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
}

impl Trap {
    pub fn as_str(self) -> &'static str {
        match self {
            Trap::TooLong => "too_long",
            Trap::TooManyParams => "too_many_params",
            Trap::RepeatedSegment => "repeated_segment",
            Trap::PatternCap => "pattern_cap",
        }
    }
}

/// The limits (`crawl.traps` in `config.yml`); 0 turns a rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrapRules {
    pub max_url_bytes: usize,
    pub max_query_params: usize,
    pub max_segment_repeats: usize,
    pub max_urls_per_pattern: u32,
}

impl Default for TrapRules {
    fn default() -> TrapRules {
        TrapRules {
            max_url_bytes: 2048,
            max_query_params: 10,
            max_segment_repeats: 2,
            max_urls_per_pattern: 25,
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
        None
    }
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

/// URLs admitted per (host, pattern) in this run.
#[derive(Debug, Default)]
pub struct PatternCount {
    counts: HashMap<(String, u64), u32>,
}

impl PatternCount {
    /// Count `url`, found on the page `from`, under its host and pattern;
    /// `false` once the pattern already has `cap` URLs (it is then not
    /// counted). A URL without a query is counted only when found on a page
    /// of the same host and pattern (see the module doc). `cap` 0: no cap.
    pub fn admit(&mut self, host: &str, url: &Url, from: &Url, cap: u32) -> bool {
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
        };
        assert_eq!(off.check(&u(&long)), None);
        assert_eq!(off.check(&u("https://a.test/a/a/a/a")), None);
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
}
