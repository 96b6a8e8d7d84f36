//! Lists of literal phrases matched without case, built on first use into
//! one Aho-Corasick automaton: tens of microseconds to build where the same
//! list as a case-insensitive regex alternation costs a millisecond or
//! more, which a single page (`scraper extract FILE`, `check-url`) pays in
//! full (`benches/one_page.sh`).
//!
//! Texts are matched in lower case ([`lower`]) and phrases are written in
//! lower case; a word boundary is the regex crate's Unicode `\b` (a word
//! character on one side and not on the other, [`is_word`]). Where a list
//! replaces a regex, its test holds it to that regex on the same texts.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

/// A text in lower case, as phrases are matched against it.
pub fn lower(text: &str) -> String {
    text.to_lowercase()
}

/// A word character as the regex crate's Unicode `\w` counts one (letters,
/// digits, marks, connector punctuation).
pub fn is_word(c: char) -> bool {
    c.is_alphanumeric()
        || c == '_'
        || matches!(
            c,
            '\u{300}'..='\u{36f}' | '\u{200c}' | '\u{200d}' | '\u{203f}' | '\u{2040}'
        )
}

/// Is there a word boundary between `before` and `after` (`None`: the
/// text's edge)?
pub fn boundary(before: Option<char>, after: Option<char>) -> bool {
    before.is_some_and(is_word) != after.is_some_and(is_word)
}

/// A list of lower-case phrases.
pub struct Phrases {
    list: &'static [&'static str],
    automaton: OnceLock<AhoCorasick>,
    /// Longest phrase in bytes (a prefix search reads no further).
    longest: OnceLock<usize>,
}

impl Phrases {
    /// The automaton is built the first time the list is asked.
    pub const fn new(list: &'static [&'static str]) -> Phrases {
        Phrases {
            list,
            automaton: OnceLock::new(),
            longest: OnceLock::new(),
        }
    }

    /// The phrases.
    pub fn list(&self) -> &'static [&'static str] {
        self.list
    }

    fn automaton(&self) -> &AhoCorasick {
        self.automaton.get_or_init(|| {
            debug_assert!(
                self.list.iter().all(|p| *p == lower(p)),
                "phrases are lower case"
            );
            AhoCorasick::new(self.list).expect("a small list of phrases")
        })
    }

    /// Does `lower` contain a phrase anywhere?
    pub fn contains(&self, lower: &str) -> bool {
        self.automaton().is_match(lower)
    }

    /// Does a phrase occur with a word boundary before and after it?
    pub fn contains_word(&self, lower: &str) -> bool {
        self.automaton().find_overlapping_iter(lower).any(|m| {
            boundary(
                lower[..m.start()].chars().next_back(),
                first(&lower[m.start()..]),
            ) && boundary(last(&lower[..m.end()]), first(&lower[m.end()..]))
        })
    }

    /// Does `lower` open with a phrase after which `rest` accepts what
    /// follows? (`rest` gets the text after the phrase, and the phrase.)
    pub fn opens(&self, lower: &str, rest: impl Fn(&str, &str) -> bool) -> bool {
        let longest = *self
            .longest
            .get_or_init(|| self.list.iter().map(|p| p.len()).max().unwrap_or(0));
        let mut end = longest.min(lower.len());
        while !lower.is_char_boundary(end) {
            end += 1;
        }
        self.automaton()
            .find_overlapping_iter(&lower[..end])
            .filter(|m| m.start() == 0)
            .any(|m| rest(&lower[m.end()..], &lower[..m.end()]))
    }

    /// Does `lower` open with a phrase followed by a word boundary (the
    /// regex `^(?i)(…)\b`)?
    pub fn opens_word(&self, lower: &str) -> bool {
        self.opens(lower, |rest, phrase| boundary(last(phrase), first(rest)))
    }
}

fn first(s: &str) -> Option<char> {
    s.chars().next()
}

fn last(s: &str) -> Option<char> {
    s.chars().next_back()
}

#[cfg(test)]
pub(crate) mod oracle {
    //! Texts to hold a phrase list to the regex it replaces.

    /// Each phrase as it may appear: in other cases, alone, with words,
    /// letters or punctuation before and after, and cut short.
    pub fn texts(phrases: &[&str]) -> Vec<String> {
        let before = ["", "a ", "x", " ", "» ", "1. "];
        let after = [
            "",
            " ",
            "s",
            "es",
            "x",
            ":",
            " :",
            "!!",
            " …",
            ": now",
            " more words here",
            "\n",
            "-",
            "»",
        ];
        let mut out = Vec::new();
        for p in phrases {
            let forms = [p.to_string(), p.to_uppercase(), capitalise(p)];
            for f in &forms {
                for b in before {
                    for a in after {
                        out.push(format!("{b}{f}{a}"));
                    }
                }
                let cut: String = f
                    .chars()
                    .take(f.chars().count().saturating_sub(1))
                    .collect();
                out.push(cut);
            }
        }
        out
    }

    fn capitalise(p: &str) -> String {
        let mut c = p.chars();
        match c.next() {
            Some(f) => f.to_uppercase().chain(c).collect(),
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static LIST: Phrases = Phrases::new(&["read more", "©", "stand:", "über uns"]);

    #[test]
    fn boundaries_follow_the_regex_crate() {
        let re = regex::Regex::new(r"(?i)^(read more|©|stand:|über uns)\b").unwrap();
        for (text, open) in [
            ("read more", true),
            ("Read more about it", true),
            ("read mores", false),
            ("©2020", true),
            ("© 2020", false),
            ("Stand:05", true),
            ("Stand: 05", false),
            ("Über uns", true),
            ("a read more", false),
        ] {
            assert_eq!(LIST.opens_word(&lower(text)), open, "{text}");
            assert_eq!(re.is_match(text), open, "the regex on {text}");
        }
        assert!(LIST.contains_word(&lower("see: READ MORE.")));
        assert!(!LIST.contains_word(&lower("unread more")));
        assert!(LIST.contains(&lower("unread more")));
    }
}
