//! One vocabulary compiled into a single leftmost-longest regex alternation,
//! following the matching rules in the module doc of [`super`].

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;

use super::TermCount;

/// The distinct non-empty terms, longest first, and their alternation
/// (`None` when there are none).
fn alternation(terms: &[String]) -> (Vec<&String>, Option<String>) {
    let mut sorted: Vec<&String> = terms.iter().filter(|t| !t.trim().is_empty()).collect();
    sorted.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    sorted.dedup();
    if sorted.is_empty() {
        return (sorted, None);
    }
    let alternation: Vec<String> = sorted
        .iter()
        .map(|t| format!("({})", term_pattern(t)))
        .collect();
    (sorted, Some(alternation.join("|")))
}

/// Pattern bytes below which an alternation of escaped terms always compiles
/// within the regex crate's default size limit (10 MB of program; a test
/// holds the worst kind of pattern this size to it), so
/// [`Matcher::check`] need not compile it.
const ALWAYS_COMPILES: usize = 32 * 1024;

/// Bytes a term's piece of the alternation can take at most: every byte of
/// the term at most 44 (a hyphen becomes a 20-byte class in the term and
/// again in its upper-case copy; any other byte, escaped, at most 2 in the
/// term and 12 in its upper case), and 64 for the boundaries, the plural,
/// the group and the `|`. Cheap to sum, so a config's lists are not built
/// only to be measured.
fn pattern_bound(term: &str) -> usize {
    44 * term.len() + 64
}

/// A vocabulary, compiled on its first use (an `ambiguous` group's context
/// words only when a page mentions one of its terms).
#[derive(Debug, Clone)]
pub(super) struct Matcher {
    /// The alternation, `None` when the vocabulary is empty.
    pattern: Option<String>,
    /// The compiled alternation (`None` inside: empty, or not compiled).
    regex: OnceLock<Option<Regex>>,
    /// Term for capture group `i + 1`.
    terms: Vec<String>,
}

impl Matcher {
    /// The vocabulary compiled. A list too large to compile is refused when
    /// the config is loaded ([`Matcher::check`]); one built past that check
    /// matches nothing, with an error logged.
    pub(super) fn new(terms: &[String]) -> Matcher {
        let (sorted, pattern) = alternation(terms);
        Matcher {
            pattern,
            regex: OnceLock::new(),
            terms: sorted.into_iter().cloned().collect(),
        }
    }

    /// Whether `terms` compile; the error says why not (every piece is
    /// escaped, so only a size limit can fail). A pattern shorter than
    /// [`ALWAYS_COMPILES`] is not compiled: checking a config stays cheap.
    pub(super) fn check(terms: &[String]) -> Result<(), regex::Error> {
        if terms.iter().map(|t| pattern_bound(t)).sum::<usize>() < ALWAYS_COMPILES {
            return Ok(());
        }
        match alternation(terms).1 {
            Some(p) if p.len() >= ALWAYS_COMPILES => Regex::new(&p).map(|_| ()),
            _ => Ok(()),
        }
    }

    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| {
                let p = self.pattern.as_deref()?;
                Regex::new(p)
                    .map_err(|e| {
                        tracing::error!(error = %e, "keyword list not compiled: it matches nothing")
                    })
                    .ok()
            })
            .as_ref()
    }

    /// The terms, in the order [`Matcher::each`] numbers them.
    pub(super) fn terms(&self) -> &[String] {
        &self.terms
    }

    /// Every match as (start, end, term index), in order.
    pub(super) fn each(&self, text: &str, mut f: impl FnMut(usize, usize, usize)) {
        let Some(regex) = self.regex() else { return };
        for caps in regex.captures_iter(text) {
            if let Some(i) = (1..caps.len()).find(|&i| caps.get(i).is_some())
                && let Some(m) = caps.get(0)
            {
                f(m.start(), m.end(), i - 1);
            }
        }
    }

    /// Count matches per term; returns the total.
    pub(super) fn count(&self, text: &str, counts: &mut HashMap<usize, u32>) -> u32 {
        let mut total = 0;
        self.each(text, |_, _, i| {
            *counts.entry(i).or_default() += 1;
            total += 1;
        });
        total
    }

    /// Matches in `text`, without finding which term each is (no captures, so
    /// much cheaper than [`Matcher::count`], and always the same total).
    pub(super) fn total(&self, text: &str) -> u32 {
        self.regex().map_or(0, |r| r.find_iter(text).count() as u32)
    }

    pub(super) fn any(&self, text: &str) -> bool {
        self.regex().is_some_and(|r| r.is_match(text))
    }

    pub(super) fn tally(&self, counts: HashMap<usize, u32>) -> Vec<TermCount> {
        let mut out: Vec<TermCount> = counts
            .into_iter()
            .map(|(i, count)| TermCount {
                term: self.terms[i].clone(),
                count,
            })
            .collect();
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.term.cmp(&b.term)));
        out
    }
}

/// The regex for one term, following the module's matching rules.
fn term_pattern(term: &str) -> String {
    let words: Vec<&str> = term.split_whitespace().collect();
    let mut pattern = String::new();
    let first_is_word = term.trim().chars().next().is_some_and(is_word_char);
    let last = term.trim().chars().last();
    if first_is_word {
        pattern.push_str(r"(?-u:\b)");
    }
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            pattern.push_str(r"[\s\-\u{2010}\u{2011}]+");
        }
        match word.strip_suffix('*').filter(|w| !w.is_empty()) {
            Some(stem) => {
                pattern.push_str(&word_pattern(stem));
                pattern.push_str(ANY_ENDING);
            }
            None => pattern.push_str(&word_pattern(word)),
        }
    }
    if last == Some('*') {
        return pattern;
    }
    let plural_ok = last.is_some_and(|c| c.is_ascii_alphabetic());
    let last_sensitive = words.last().is_some_and(|w| is_case_sensitive(w));
    if plural_ok {
        pattern.push_str(if last_sensitive {
            "(?:s|es)?"
        } else {
            "(?i:s|es)?"
        });
    }
    if last.is_some_and(is_word_char) {
        pattern.push_str(r"(?-u:\b)");
    }
    pattern
}

/// What a word ending in `*` may continue with: any Latin letters, accented
/// ones included (`Sprachmodell*` is also `Sprachmodelle`, `Sprachmodellen`).
const ANY_ENDING: &str = r"[a-zA-Z\u{00C0}-\u{024F}]*";

/// A word with a capital letter matches exactly or in all capitals; a
/// lowercase word matches in any case. Hyphens match the Unicode hyphens too.
fn word_pattern(word: &str) -> String {
    let escape = |w: &str| regex::escape(w).replace(r"\-", r"[\-\u{2010}\u{2011}]");
    if is_case_sensitive(word) {
        let upper = word.to_uppercase();
        if upper == word {
            format!("(?:{})", escape(word))
        } else {
            format!("(?:{}|{})", escape(word), escape(&upper))
        }
    } else {
        format!("(?i:{})", escape(word))
    }
}

fn is_case_sensitive(word: &str) -> bool {
    word.chars().any(char::is_uppercase)
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_holds_every_term_s_pattern() {
        for t in [
            "ai",
            "AI",
            "GPT-4o",
            "large language model",
            "künstliche Intelligenz",
            "ß-Straße",
            "KI-Modell*",
            "x-y-z",
            "ǆ",
            "ﬃ",
            "İstanbul",
            "c++",
            "(a.b)",
            "人工知能",
            "-",
            "a - b",
            "Sprachmodell*",
            "ŉ",
        ] {
            let one = [t.to_string()];
            let len = alternation(&one).1.map_or(0, |p| p.len());
            assert!(
                pattern_bound(t) > len,
                "{t}: {len} over {}",
                pattern_bound(t)
            );
        }
    }

    /// The claim behind [`ALWAYS_COMPILES`]: a pattern just under it, made
    /// of the costliest pieces (case-insensitive non-ASCII words, stems,
    /// phrases), compiles.
    #[test]
    fn a_pattern_under_the_check_limit_compiles() {
        let mut terms = Vec::new();
        let mut n = 0;
        loop {
            terms.push(format!("größe{n}* künstliche* ÉTÉ{n} intelligenz{n}s"));
            let len = alternation(&terms).1.map_or(0, |p| p.len());
            if len >= ALWAYS_COMPILES {
                terms.pop();
                break;
            }
            n += 1;
        }
        let pattern = alternation(&terms).1.expect("terms");
        assert!(pattern.len() > ALWAYS_COMPILES - 400, "{}", pattern.len());
        assert!(Regex::new(&pattern).is_ok());
        assert!(Matcher::check(&terms).is_ok());
    }
}
