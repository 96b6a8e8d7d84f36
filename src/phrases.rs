//! Lists of literal phrases matched without case, built on first use into
//! one Aho-Corasick automaton: tens of microseconds to build where the same
//! list as a case-insensitive regex alternation costs a millisecond or
//! more, which a single page (`scraper extract FILE`, `check-url`) pays in
//! full (`benches/one_page.sh`).
//!
//! Texts are matched in lower case ([`lower`]) and phrases are written in
//! lower case (a text matched as it is gives a case-sensitive match, as
//! [`ClassWords`] does); a word boundary is the regex crate's Unicode `\b` (a word
//! character on one side and not on the other, [`is_word`]). Where a list
//! replaces a regex, its test holds it to that regex on the same texts.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind};

/// A text in lower case, as phrases are matched against it: exactly
/// `str::to_lowercase`, faster on scripts without case (a CJK, Arabic or
/// Hebrew character is copied, where the standard library looks each one up
/// in its case table).
pub fn lower(text: &str) -> String {
    // A capital sigma's lower case depends on its neighbours (word-final ς).
    if text.is_ascii() || text.contains('\u{3a3}') {
        return text.to_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if is_caseless(c) {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Blocks where no character has a lower-case mapping (a test checks each).
fn is_caseless(c: char) -> bool {
    matches!(
        c,
        '\u{0590}'..='\u{06ff}'     // Hebrew, Arabic
            | '\u{0900}'..='\u{0e7f}' // Indic scripts, Sinhala, Thai
            | '\u{2000}'..='\u{206f}' // general punctuation
            | '\u{3000}'..='\u{30ff}' // CJK punctuation, kana
            | '\u{4e00}'..='\u{9fff}' // CJK ideographs
            | '\u{ac00}'..='\u{d7a3}' // Hangul syllables
    )
}

/// A word character as the regex crate's Unicode `\w` counts one (letters,
/// digits, marks, connector punctuation).
pub(crate) fn is_word(c: char) -> bool {
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
    source: Source,
    built: OnceLock<Built>,
}

/// How the phrases are written.
enum Source {
    List(&'static [&'static str]),
    /// A literal alternation ([`expand`]).
    Pattern(&'static str),
}

struct Built {
    phrases: Vec<String>,
    automaton: AhoCorasick,
    /// Longest phrase in bytes (a prefix search reads no further).
    longest: usize,
}

impl Phrases {
    /// The phrases of a list; the automaton is built the first time the
    /// list is asked.
    pub const fn new(list: &'static [&'static str]) -> Phrases {
        Phrases {
            source: Source::List(list),
            built: OnceLock::new(),
        }
    }

    /// The phrases a literal alternation spells ([`expand`]), such as
    /// `info-?box|embed-?(consent|privacy)`.
    pub const fn pattern(pattern: &'static str) -> Phrases {
        Phrases {
            source: Source::Pattern(pattern),
            built: OnceLock::new(),
        }
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let phrases: Vec<String> = match self.source {
                Source::List(list) => list.iter().map(|p| p.to_string()).collect(),
                Source::Pattern(p) => expand(p),
            };
            debug_assert!(
                phrases.iter().all(|p| *p == lower(p)),
                "phrases are lower case"
            );
            Built {
                automaton: automaton(&phrases),
                longest: phrases.iter().map(String::len).max().unwrap_or(0),
                phrases,
            }
        })
    }

    fn automaton(&self) -> &AhoCorasick {
        &self.built().automaton
    }

    /// The phrases.
    pub fn list(&self) -> Vec<&str> {
        self.built().phrases.iter().map(String::as_str).collect()
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
        let longest = self.built().longest;
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

/// An automaton cheap to build (a contiguous NFA: about a fifth of the
/// build time of the DFA the crate would choose for a short list, and
/// searches of short texts are as quick).
pub(crate) fn automaton<P: AsRef<[u8]>>(phrases: &[P]) -> AhoCorasick {
    builder().build(phrases).expect("a small list of phrases")
}

/// The builder [`automaton`] uses, for other settings on top.
pub fn builder() -> AhoCorasickBuilder {
    let mut b = AhoCorasickBuilder::new();
    b.kind(Some(AhoCorasickKind::ContiguousNFA));
    b
}

/// Class names and ids matched as a case-sensitive regex of literals
/// would: a phrase anywhere, or a whole token (between the text's ends,
/// white space, `_` and `-`) among `tokens`, or a token opening with one
/// of `token_starts`.
pub(crate) struct ClassWords {
    pub anywhere: Phrases,
    pub tokens: &'static [&'static str],
    pub(crate) token_starts: &'static [&'static str],
}

impl ClassWords {
    /// Does `names` (class names and id, as the page writes them) hold one
    /// of the words?
    pub(crate) fn is_match(&self, names: &str) -> bool {
        self.anywhere.contains(names)
            || ((!self.tokens.is_empty() || !self.token_starts.is_empty())
                && names
                    .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
                    .any(|t| {
                        self.tokens.contains(&t)
                            || self.token_starts.iter().any(|s| t.starts_with(s))
                    }))
    }
}

/// Every phrase a literal alternation spells: `|` between alternatives,
/// `( )` around a group of them, `?` after a character or a group makes it
/// optional, `\\` takes the next character as it is. `a-?b(c|d)` is
/// `a-bc`, `a-bd`, `abc`, `abd`.
pub(crate) fn expand(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let (mut out, end) = alternatives(&chars, 0);
    assert_eq!(end, chars.len(), "an unmatched ')' in {pattern}");
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// The alternatives from `i` to the closing `)` or the end, and where they stop.
fn alternatives(chars: &[char], mut i: usize) -> (Vec<String>, usize) {
    let mut done = Vec::new();
    let mut cur = vec![String::new()];
    while i < chars.len() {
        let piece: Vec<String> = match chars[i] {
            '|' => {
                done.append(&mut cur);
                cur = vec![String::new()];
                i += 1;
                continue;
            }
            ')' => break,
            '(' => {
                let (group, end) = alternatives(chars, i + 1);
                assert!(end < chars.len(), "an unclosed '(' in a phrase pattern");
                i = end + 1;
                group
            }
            '\\' if i + 1 < chars.len() => {
                i += 2;
                vec![chars[i - 1].to_string()]
            }
            c => {
                i += 1;
                vec![c.to_string()]
            }
        };
        let optional = chars.get(i) == Some(&'?');
        if optional {
            i += 1;
        }
        let mut next = Vec::with_capacity(cur.len() * (piece.len() + 1));
        for a in &cur {
            for b in &piece {
                next.push(format!("{a}{b}"));
            }
            if optional {
                next.push(a.clone());
            }
        }
        cur = next;
    }
    done.append(&mut cur);
    (done, i)
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

    /// Class names to hold a [`super::ClassWords`] or a case-sensitive
    /// list to its regex: token edge cases, then each phrase alone, inside
    /// other names, cut short and in capitals.
    pub(crate) fn class_texts(phrases: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = [
            "comment-list",
            "ad",
            "ads",
            "x-ad-y",
            "header_ad",
            "bad",
            "tag",
            "tags",
            "taglist",
            "nav",
            "navigation",
            "main-nav",
            "canvas",
            "sub_nav",
            "slide",
            "slides",
            "slideshow",
            "slider",
            "my-slides",
            "landslide",
            "article-body",
            "articlebody",
            "entry content",
            "info-box",
            "infobox",
            "embed-consent",
            "privacyshield",
            "read-next",
            "readalso",
            "ARTICLE",
            "Nav",
            "h-entry",
            "com-x",
            "",
            "  ",
            "foo bar",
            "about-theauthor",
            "dek",
            "x_deck",
            "summary-box",
            "author",
            "authors",
            "co-author",
            "authorship",
            "is-locked",
        ]
        .map(String::from)
        .to_vec();
        for p in phrases {
            let cut: String = p
                .chars()
                .take(p.chars().count().saturating_sub(1))
                .collect();
            out.extend([
                p.to_string(),
                format!("x {p}-y"),
                format!("a{p}b"),
                cut,
                p.to_uppercase(),
            ]);
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
mod lower_tests {
    use super::{is_caseless, lower};

    #[test]
    fn caseless_blocks_have_no_lower_case() {
        let mut n = 0;
        for c in (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_caseless(c))
        {
            assert!(
                c.to_lowercase().eq(std::iter::once(c)),
                "{c:?} has a lower case"
            );
            n += 1;
        }
        assert!(n > 30_000, "{n}");
    }

    #[test]
    fn lower_is_to_lowercase() {
        for t in [
            "Hello WORLD",
            "ÉCOLE Ça Straße İstanbul",
            "ΟΔΟΣ ΣΟΦΟΣ, Σ.",
            "Нейросеть GPT-5 と 人工知能 AI",
            "الذكاء الاصطناعي AI",
            "인공지능 ABC",
            "\u{2014}Zürich\u{3000}",
            "",
        ] {
            assert_eq!(lower(t), t.to_lowercase(), "{t}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static LIST: Phrases = Phrases::new(&["read more", "©", "stand:", "über uns"]);

    #[test]
    fn patterns_expand_to_their_phrases() {
        assert_eq!(expand("a-?b(c|d)"), ["a-bc", "a-bd", "abc", "abd"]);
        assert_eq!(expand("x|(y|z)s?|w\\?"), ["x", "ys", "y", "zs", "z", "w?"]);
        assert_eq!(expand("ab(c|d)?"), ["abc", "abd", "ab"]);
    }

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
