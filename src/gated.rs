//! A regex built on first use, and asked only about text a cheap, exact
//! test says it could match: a page none of whose text passes the test never
//! pays for building it (`benches/one_page.sh` measures one page's CPU).
//!
//! The gate must be a necessary condition of a match (it may pass text the
//! regex then rejects, never reject text the regex would match), so results
//! are the regex's own. State at each gate why it holds.

use std::sync::LazyLock;

use regex::{CaptureMatches, Captures, Regex};

/// A [`Regex`] behind a necessary-condition gate, built on first use.
pub(crate) struct Gated {
    gate: fn(&str) -> bool,
    regex: LazyLock<Regex>,
}

impl Gated {
    /// `build` runs once, the first time text passes `gate`.
    pub(crate) const fn new(gate: fn(&str) -> bool, build: fn() -> Regex) -> Gated {
        Gated {
            gate,
            regex: LazyLock::new(build),
        }
    }

    /// [`Regex::is_match`], false at once for text the gate rejects.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        (self.gate)(text) && self.regex.is_match(text)
    }

    /// [`Regex::find`], `None` at once for text the gate rejects.
    pub(crate) fn find<'h>(&self, text: &'h str) -> Option<regex::Match<'h>> {
        if (self.gate)(text) {
            self.regex.find(text)
        } else {
            None
        }
    }

    /// [`Regex::captures`], `None` at once for text the gate rejects.
    pub(crate) fn captures<'h>(&self, text: &'h str) -> Option<Captures<'h>> {
        if (self.gate)(text) {
            self.regex.captures(text)
        } else {
            None
        }
    }

    /// [`Regex::replace`], the text itself where the gate rejects it.
    pub(crate) fn replace<'h>(&self, text: &'h str, with: &str) -> std::borrow::Cow<'h, str> {
        if (self.gate)(text) {
            self.regex.replace(text, with)
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    /// [`Regex::captures_iter`], empty for text the gate rejects.
    pub(crate) fn captures_iter<'r, 'h>(
        &'r self,
        text: &'h str,
    ) -> std::iter::Flatten<std::option::IntoIter<CaptureMatches<'r, 'h>>> {
        (self.gate)(text)
            .then(|| self.regex.captures_iter(text))
            .into_iter()
            .flatten()
    }
}

#[cfg(test)]
impl Gated {
    /// Does the gate hold on `text`: does it pass every text the regex
    /// matches? (For tests of a gate; builds the regex.)
    pub fn holds(&self, text: &str) -> bool {
        (self.gate)(text) || !self.regex.is_match(text)
    }

    /// Assert that the gate holds on every line, and that more than
    /// `least` of the lines are matches (so the lines test something).
    pub(crate) fn assert_holds_on(&self, name: &str, lines: &[String], least: usize) {
        let mut matched = 0;
        for t in lines {
            assert!(
                self.holds(t),
                "{name}'s gate rejects {t:?}, which it matches"
            );
            matched += usize::from(self.is_match(t));
        }
        assert!(
            matched > least,
            "{name}: the lines hold matches ({matched})"
        );
    }
}

/// Text holding a year a written date can carry: every date pattern with a
/// four-digit year spells `(?:19|20)` in ASCII.
pub(crate) fn has_year(text: &str) -> bool {
    text.contains("19") || text.contains("20")
}

/// Text that may hold a letter: an ASCII letter or any non-ASCII byte (a
/// Unicode letter outside ASCII is encoded with bytes >= 0x80).
pub(crate) fn may_have_letter(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_alphabetic() || b >= 0x80)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static BUILT: AtomicUsize = AtomicUsize::new(0);
    static WORD_YEAR: Gated = Gated::new(
        |t| has_year(t) && may_have_letter(t),
        || {
            BUILT.fetch_add(1, Ordering::SeqCst);
            Regex::new(r"(\p{L}+) ((?:19|20)\d\d)").expect("static regex")
        },
    );

    #[test]
    fn answers_as_the_regex_does_and_builds_only_past_the_gate() {
        assert!(WORD_YEAR.captures("12:30 7").is_none());
        assert!(!WORD_YEAR.is_match("no year"));
        assert_eq!(BUILT.load(Ordering::SeqCst), 0, "built for gated text");
        let c = WORD_YEAR.captures("im März 2024").expect("a match");
        assert_eq!((&c[1], &c[2]), ("März", "2024"));
        assert!(!WORD_YEAR.is_match("2024"));
        assert!(WORD_YEAR.is_match("Mai 2019"));
        let all: Vec<String> = WORD_YEAR
            .captures_iter("Mai 2019, Juni 2020; 1999")
            .map(|c| c[1].to_string())
            .collect();
        assert_eq!(all, ["Mai", "Juni"]);
        assert_eq!(WORD_YEAR.captures_iter("none").count(), 0);
        assert_eq!(BUILT.load(Ordering::SeqCst), 1);
    }
}
