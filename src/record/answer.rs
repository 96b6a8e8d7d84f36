//! [`Answer`]: how one request went, classified once per finished job
//! (`crawl::outcome`) and recorded by the host counters (as an
//! [`ErrorClass`](super::ErrorClass)), the health tally and the reach
//! tracker; the health records count it (`answers` keys, a seed's `answer`,
//! `scraper probe`'s listings, and `seed_problems` in `last_run.json`). Written as the strings these files
//! have always held: `2xx`, `304`, any other status (`404`), a failure
//! class (`timeout`, `robots`, ...), `not_a_listing`, `bad_listing`, `panic`.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::FailureClass;

/// How one request went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    /// Any 2xx.
    Success,
    /// A conditional request answered 304: nothing new, which is fine.
    NotModified,
    /// Any other HTTP status (never 2xx nor 304: see [`Answer::status`]).
    Status(u16),
    /// No answer, or one refused before it was read ([`FailureClass::Robots`]:
    /// robots.txt kept the crawler from the URL, nothing was sent).
    Failed(FailureClass),
    /// A seed expected to be a feed or sitemap came back as a page.
    NotAListing,
    /// A feed or sitemap that could not be parsed.
    BadListing,
    /// The parser panicked on the body.
    Panicked,
}

impl Answer {
    /// URLs robots.txt kept the crawler from (not requests).
    pub(crate) const ROBOTS: Answer = Answer::Failed(FailureClass::Robots);

    /// The answer of an HTTP status.
    pub fn status(code: u16) -> Answer {
        match code {
            200..=299 => Answer::Success,
            304 => Answer::NotModified,
            _ => Answer::Status(code),
        }
    }

    /// A success (`2xx` or `304`)?
    pub(crate) fn is_fine(self) -> bool {
        matches!(self, Answer::Success | Answer::NotModified)
    }

    /// Is a failure the URL's own (dead or moved) rather than the host's?
    pub(crate) fn is_url_level(self) -> bool {
        matches!(
            self,
            Answer::Status(404 | 410)
                | Answer::NotAListing
                | Answer::BadListing
                | Answer::Failed(
                    FailureClass::OutOfScope
                        | FailureClass::RedirectLoop
                        | FailureClass::TooManyRedirects
                        | FailureClass::NotHtml
                )
        )
    }

    /// The written form.
    pub fn name(self) -> Cow<'static, str> {
        match self {
            Answer::Success => Cow::Borrowed("2xx"),
            Answer::NotModified => Cow::Borrowed("304"),
            Answer::Status(code) => Cow::Owned(code.to_string()),
            Answer::Failed(class) => Cow::Borrowed(class.as_str()),
            Answer::NotAListing => Cow::Borrowed("not_a_listing"),
            Answer::BadListing => Cow::Borrowed("bad_listing"),
            Answer::Panicked => Cow::Borrowed("panic"),
        }
    }

    /// The answer written as `name` (the inverse of [`Answer::name`]).
    pub(crate) fn from_name(name: &str) -> Option<Answer> {
        Some(match name {
            "2xx" => Answer::Success,
            "not_a_listing" => Answer::NotAListing,
            "bad_listing" => Answer::BadListing,
            "panic" => Answer::Panicked,
            _ => match name.parse::<u16>() {
                Ok(code) if !(200..=299).contains(&code) => Answer::status(code),
                Ok(_) => return None,
                Err(_) => Answer::Failed(FailureClass::from_name(name)?),
            },
        })
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// By the written form, so maps of answers keep the key order of the files.
impl Ord for Answer {
    fn cmp(&self, other: &Answer) -> Ordering {
        self.name().cmp(&other.name())
    }
}

impl PartialOrd for Answer {
    fn partial_cmp(&self, other: &Answer) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Answer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Answer, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        Answer::from_name(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown answer `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_sort_as_written() {
        let all = [
            Answer::Success,
            Answer::NotModified,
            Answer::Status(403),
            Answer::Status(503),
            Answer::Failed(FailureClass::Timeout),
            Answer::ROBOTS,
            Answer::NotAListing,
            Answer::BadListing,
            Answer::Panicked,
        ];
        for a in all {
            let v = serde_json::to_value(a).unwrap();
            assert_eq!(v, serde_json::Value::String(a.to_string()));
            assert_eq!(serde_json::from_value::<Answer>(v).unwrap(), a);
        }
        assert_eq!(Answer::status(204), Answer::Success);
        assert_eq!(Answer::from_name("304"), Some(Answer::status(304)));
        assert_eq!(Answer::from_name("410"), Some(Answer::Status(410)));
        assert_eq!(Answer::from_name("200"), None);
        assert_eq!(Answer::from_name("mystery"), None);
        // As map keys: the files' key order is the names' order.
        let map: std::collections::BTreeMap<Answer, u64> = all.iter().map(|a| (*a, 1)).collect();
        let text = serde_json::to_string(&map).unwrap();
        let back: std::collections::BTreeMap<Answer, u64> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, map);
        let mut names: Vec<String> = all.iter().map(|a| a.to_string()).collect();
        names.sort();
        let keys: Vec<String> = map.keys().map(|a| a.to_string()).collect();
        assert_eq!(keys, names);
    }

    #[test]
    fn url_level_failures_are_the_urls_own() {
        for (a, own) in [
            (Answer::Status(404), true),
            (Answer::Status(410), true),
            (Answer::Status(403), false),
            (Answer::Status(503), false),
            (Answer::Failed(FailureClass::OutOfScope), true),
            (Answer::Failed(FailureClass::Timeout), false),
            (Answer::NotAListing, true),
            (Answer::BadListing, true),
            (Answer::ROBOTS, false),
        ] {
            assert_eq!(a.is_url_level(), own, "{a}");
        }
    }
}
