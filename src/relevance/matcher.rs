//! One vocabulary matched through one Aho-Corasick automaton of its terms'
//! first letters, each candidate then read term by term, following the
//! matching rules in the module doc of [`super`]. It finds what the regex
//! alternation of the terms (longest first) would find, with the regex
//! crate's simple case folding, and costs microseconds to build where that
//! regex cost a millisecond or more, paid in full by a single page
//! (`benches/one_page.sh`). A test holds the two to the same matches.
//!
//! The keys are found by a byte trie ([`Keys`]) walked only from where a
//! key may begin: a key whose terms all need a word boundary before them
//! is not looked for inside a word, so most bytes of a text cost one table
//! look-up (an automaton over every byte cost four times as much).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::TermCount;

/// A vocabulary, built on its first use (an `ambiguous` group's context
/// words only when a page mentions one of its terms).
#[derive(Debug, Clone)]
pub(super) struct Matcher {
    /// The distinct non-empty terms, longest first; term `i` is the
    /// `i`-th alternative.
    terms: Vec<String>,
    built: OnceLock<Built>,
}

#[derive(Debug, Clone)]
struct Built {
    terms: Vec<Term>,
    /// Keys: how each term may begin (ASCII letters in any case).
    keys: Keys,
    /// Terms of each key, in priority order.
    by_key: Vec<Vec<usize>>,
}

/// A term read into the pieces its matching rules name.
#[derive(Debug, Clone)]
struct Term {
    words: Vec<Word>,
    /// ASCII word boundary before (the term opens with an ASCII letter,
    /// digit or `_`).
    lead_boundary: bool,
    /// The ending after the last word: `s`/`es` (in any case unless the
    /// word is case-sensitive), then an ASCII word boundary.
    plural: Option<bool>,
    trail_boundary: bool,
}

#[derive(Debug, Clone)]
struct Word {
    /// Spellings tried in turn: the word, and its capitals when it has a
    /// capital letter.
    spellings: Vec<Vec<char>>,
    /// Case-sensitive (the word has a capital letter).
    exact: bool,
    /// Ends in `*`: any Latin letters may follow.
    stem: bool,
}

impl Matcher {
    /// The vocabulary, built when first asked.
    pub(super) fn new(terms: &[String]) -> Matcher {
        let mut sorted: Vec<&String> = terms.iter().filter(|t| !t.trim().is_empty()).collect();
        sorted.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        sorted.dedup();
        Matcher {
            terms: sorted.into_iter().cloned().collect(),
            built: OnceLock::new(),
        }
    }

    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let terms: Vec<Term> = self.terms.iter().map(|t| Term::read(t)).collect();
            let mut keys: Vec<String> = Vec::new();
            let mut by_key: Vec<Vec<usize>> = Vec::new();
            for (i, t) in terms.iter().enumerate() {
                for k in t.keys() {
                    // Keys equal but for ASCII case are one key of the trie.
                    match keys.iter().position(|x| x.eq_ignore_ascii_case(&k)) {
                        Some(at) if by_key[at].contains(&i) => {}
                        Some(at) => by_key[at].push(i),
                        None => {
                            keys.push(k);
                            by_key.push(vec![i]);
                        }
                    }
                }
            }
            let free: Vec<bool> = by_key
                .iter()
                .map(|ts| ts.iter().any(|&t| !terms[t].lead_boundary))
                .collect();
            let keys = Keys::new(&keys, &free);
            Built {
                terms,
                keys,
                by_key,
            }
        })
    }

    /// The terms, in the order [`Matcher::each`] numbers them.
    pub(super) fn terms(&self) -> &[String] {
        &self.terms
    }

    /// Every match as (start, end, term index), in order: at the leftmost
    /// position where a term matches, the first term (longest first) that
    /// does, then on after its end.
    pub(super) fn each(&self, text: &str, mut f: impl FnMut(usize, usize, usize)) {
        if self.terms.is_empty() {
            return;
        }
        let b = self.built();
        let bytes = text.as_bytes();
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        b.keys.each(bytes, |start, inside, key| {
            // A key inside a word (`ai` in `said`) starts no term that needs
            // a word boundary before it ([`Term::match_at`] would refuse it).
            for &t in &b.by_key[key] {
                if !(inside && b.terms[t].lead_boundary) {
                    candidates.push((start, t));
                }
            }
        });
        candidates.sort_unstable();
        candidates.dedup();
        let mut after = 0;
        for (start, t) in candidates {
            if start < after {
                continue;
            }
            if let Some(end) = b.terms[t].match_at(text, start) {
                f(start, end, t);
                after = end;
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

    /// Matches in `text` (the same total as [`Matcher::count`]).
    pub(super) fn total(&self, text: &str) -> u32 {
        let mut n = 0;
        self.each(text, |_, _, _| n += 1);
        n
    }

    pub(super) fn any(&self, text: &str) -> bool {
        self.total(text) > 0
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

/// The keys as a trie over bytes, ASCII letters folded to lower case (what
/// an ASCII-case-insensitive Aho-Corasick automaton of them matches).
#[derive(Debug, Clone)]
struct Keys {
    /// Byte to its column in `next` (an ASCII letter's two cases on one);
    /// 0 for a byte no key holds.
    class: [u16; 256],
    columns: usize,
    /// Node `n`'s child on column `c` at `next[n * columns + c]`; 0 for
    /// none (the root, node 0, is no one's child).
    next: Vec<u32>,
    /// The key that ends at each node (keys are distinct).
    key: Vec<Option<usize>>,
    /// Whether a key at or below each node has a term that may begin
    /// inside a word (what is looked for there).
    free: Vec<bool>,
}

impl Keys {
    fn new(keys: &[String], free_key: &[bool]) -> Keys {
        let mut class = [0u16; 256];
        let mut columns = 1;
        for k in keys {
            for b in k.bytes() {
                let b = b.to_ascii_lowercase() as usize;
                if class[b] == 0 {
                    class[b] = columns as u16;
                    columns += 1;
                }
            }
        }
        // Upper-case ASCII letters on their lower-case letters' columns, so
        // that a search reads `class[b]` without folding each byte.
        for b in b'A'..=b'Z' {
            class[usize::from(b)] = class[usize::from(b.to_ascii_lowercase())];
        }
        let mut t = Keys {
            class,
            columns,
            next: vec![0; columns],
            key: vec![None],
            free: vec![false],
        };
        for (i, k) in keys.iter().enumerate() {
            let mut node = 0;
            t.free[0] |= free_key[i];
            for b in k.bytes() {
                let at = node * columns + usize::from(t.class[b.to_ascii_lowercase() as usize]);
                if t.next[at] == 0 {
                    t.next[at] = t.key.len() as u32;
                    t.next.extend(std::iter::repeat_n(0, columns));
                    t.key.push(None);
                    t.free.push(false);
                }
                node = t.next[at] as usize;
                t.free[node] |= free_key[i];
            }
            t.key[node] = Some(i);
        }
        t
    }

    /// Every key found in `text` as (start, inside a word, key), by start:
    /// what an overlapping search finds, less the keys inside a word that
    /// no term may begin there.
    fn each(&self, text: &[u8], mut f: impl FnMut(usize, bool, usize)) {
        for start in 0..text.len() {
            // No key opens with this byte (the root's row is `next[..columns]`).
            if self.next[usize::from(self.class[usize::from(text[start])])] == 0 {
                continue;
            }
            let inside = start > 0 && is_word_byte(text[start - 1]);
            if inside && !self.free[0] {
                continue;
            }
            let mut node = 0;
            for &b in &text[start..] {
                let c = self.class[usize::from(b)];
                if c == 0 {
                    break;
                }
                node = self.next[node * self.columns + usize::from(c)] as usize;
                if node == 0 || (inside && !self.free[node]) {
                    break;
                }
                if let Some(k) = self.key[node] {
                    f(start, inside, k);
                }
            }
        }
    }
}

impl Term {
    fn read(term: &str) -> Term {
        let trimmed = term.trim();
        let last = trimmed.chars().last();
        let words: Vec<Word> = term
            .split_whitespace()
            .map(|w| {
                let (body, stem) = match w.strip_suffix('*').filter(|s| !s.is_empty()) {
                    Some(s) => (s, true),
                    None => (w, false),
                };
                let exact = body.chars().any(char::is_uppercase);
                let mut spellings = vec![body.chars().collect::<Vec<char>>()];
                let upper = body.to_uppercase();
                if exact && upper != body {
                    spellings.push(upper.chars().collect());
                }
                Word {
                    spellings,
                    exact,
                    stem,
                }
            })
            .collect();
        let ends_open = last == Some('*');
        let last_exact = words.last().is_some_and(|w| w.exact);
        Term {
            lead_boundary: trimmed.chars().next().is_some_and(is_word_char),
            plural: (!ends_open && last.is_some_and(|c| c.is_ascii_alphabetic()))
                .then_some(last_exact),
            trail_boundary: !ends_open && last.is_some_and(is_word_char),
            words,
        }
    }

    /// How a match of the term may begin, for the automaton (matched with
    /// ASCII letters in any case): the first word's ASCII letters up to its
    /// first hyphen, other character, or `k` or `s` (which also match the
    /// Kelvin sign and the long s without case), else its first character
    /// in every form that matches it.
    fn keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        let Some(first) = self.words.first() else {
            return keys;
        };
        for spelling in &first.spellings {
            let ascii: String = spelling
                .iter()
                .take_while(|c| {
                    c.is_ascii()
                        && **c != '-'
                        && (first.exact || !matches!(c.to_ascii_lowercase(), 'k' | 's'))
                })
                .collect();
            if !ascii.is_empty() {
                keys.push(ascii);
                continue;
            }
            let Some(&c) = spelling.first() else { continue };
            if is_dash(c) {
                keys.extend(DASHES.iter().map(|d| d.to_string()));
            } else if first.exact {
                keys.push(c.to_string());
            } else {
                keys.extend(same_letter(c).into_iter().map(|c| c.to_string()));
            }
        }
        keys.sort();
        keys.dedup();
        keys
    }

    /// The end of this term's match starting at `start`, if it matches there.
    fn match_at(&self, text: &str, start: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        if self.lead_boundary && start > 0 && is_word_byte(bytes[start - 1]) {
            return None;
        }
        self.words_from(text, 0, start)
    }

    /// Words `k..` from `at` (word `k` right there), then the ending.
    fn words_from(&self, text: &str, k: usize, at: usize) -> Option<usize> {
        let word = &self.words[k];
        for spelling in &word.spellings {
            let Some(mut end) = spell(text, at, spelling, word.exact) else {
                continue;
            };
            if word.stem {
                end += text[end..]
                    .chars()
                    .take_while(|&c| is_latin_letter(c))
                    .map(char::len_utf8)
                    .sum::<usize>();
            }
            if k + 1 == self.words.len() {
                if let Some(e) = self.ending(text, end) {
                    return Some(e);
                }
                continue;
            }
            // One or more separators, the longest run first.
            let mut runs = Vec::new();
            let mut q = end;
            for c in text[end..].chars() {
                if !(c.is_whitespace() || is_dash(c)) {
                    break;
                }
                q += c.len_utf8();
                runs.push(q);
            }
            for &p in runs.iter().rev() {
                if let Some(e) = self.words_from(text, k + 1, p) {
                    return Some(e);
                }
            }
        }
        None
    }

    /// The plural and the boundary after the last word ending at `end`.
    fn ending(&self, text: &str, end: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        let boundary_ok = |e: usize| {
            !self.trail_boundary
                || (e > 0 && is_word_byte(bytes[e - 1]))
                    != bytes.get(e).is_some_and(|&b| is_word_byte(b))
        };
        if let Some(exact) = self.plural {
            for suffix in [&['s'][..], &['e', 's'][..]] {
                if let Some(e) = spell(text, end, suffix, exact)
                    && boundary_ok(e)
                {
                    return Some(e);
                }
            }
        }
        boundary_ok(end).then_some(end)
    }
}

/// Does `text` at `at` spell `word` (a hyphen as any dash; without case
/// unless `exact`)? Returns where the spelling ends.
fn spell(text: &str, at: usize, word: &[char], exact: bool) -> Option<usize> {
    let mut chars = text[at..].char_indices();
    for &w in word {
        let (_, c) = chars.next()?;
        let ok = if w == '-' {
            is_dash(c)
        } else if exact {
            c == w
        } else if c.is_ascii() && w.is_ascii() {
            // What [`fold`] gives for two ASCII letters, without its table.
            c.eq_ignore_ascii_case(&w)
        } else {
            c == w || fold(c) == fold(w)
        };
        if !ok {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(i, _)| at + i))
}

/// Hyphens a term's hyphen matches.
const DASHES: [char; 3] = ['-', '\u{2010}', '\u{2011}'];

fn is_dash(c: char) -> bool {
    DASHES.contains(&c)
}

/// What a word ending in `*` may continue with: any Latin letters, accented
/// ones included (`Sprachmodell*` is also `Sprachmodelle`, `Sprachmodellen`).
fn is_latin_letter(c: char) -> bool {
    c.is_ascii_alphabetic() || ('\u{00C0}'..='\u{024F}').contains(&c)
}

/// A character's simple case folding, as the regex crate's `(?i)` compares
/// letters: its one-character lower case, but for the letters [`PARTNERS`]
/// adds to a lower case letter.
fn fold(c: char) -> char {
    if let Some((l, _)) = PARTNERS.iter().find(|(_, forms)| forms.contains(&c)) {
        return *l;
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// Letters that match a lower case letter without case but are neither it
/// nor its capital (Unicode's simple case folding): the Kelvin sign, the
/// long s, the capital sharp s, Greek symbol forms, title-case digraphs...
const PARTNERS: &[(char, &[char])] = &[
    ('k', &['\u{212A}']),
    ('s', &['ſ']),
    ('å', &['\u{212B}']),
    ('ß', &['ẞ']),
    ('ω', &['\u{2126}']),
    ('σ', &['ς']),
    ('β', &['ϐ']),
    ('θ', &['ϑ', 'ϴ']),
    ('φ', &['ϕ']),
    ('π', &['ϖ']),
    ('κ', &['ϰ']),
    ('ρ', &['ϱ']),
    ('ε', &['ϵ']),
    ('ι', &['\u{345}', '\u{1FBE}']),
    ('μ', &['µ']),
    ('ṡ', &['ẛ']),
    ('ǆ', &['ǅ']),
    ('ǉ', &['ǈ']),
    ('ǌ', &['ǋ']),
    ('ǳ', &['ǲ']),
    ('в', &['\u{1C80}']),
    ('д', &['\u{1C81}']),
    ('о', &['\u{1C82}']),
    ('с', &['\u{1C83}']),
    ('т', &['\u{1C84}', '\u{1C85}']),
    ('ъ', &['\u{1C86}']),
    ('ѣ', &['\u{1C87}']),
    ('ꙋ', &['\u{1C88}']),
];

/// Every form of a letter that matches it without case (for the keys).
fn same_letter(c: char) -> Vec<char> {
    let l = fold(c);
    let mut forms = vec![c, l];
    forms.extend(l.to_uppercase());
    if let Some((_, extra)) = PARTNERS.iter().find(|(p, _)| *p == l) {
        forms.extend(extra.iter());
    }
    forms.retain(|f| fold(*f) == l);
    forms.sort();
    forms.dedup();
    forms
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    //! The matcher held to the regex alternation it replaced.
    use regex::Regex;

    use super::*;

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

    /// (start, end, term) of every match, as the old regex finds them.
    fn by_regex(re: &Regex, text: &str) -> Vec<(usize, usize, usize)> {
        re.captures_iter(text)
            .filter_map(|caps| {
                let i = (1..caps.len()).find(|&i| caps.get(i).is_some())?;
                let m = caps.get(0)?;
                Some((m.start(), m.end(), i - 1))
            })
            .collect()
    }

    pub(crate) fn same_as_regex(terms: &[String], texts: &[String]) {
        let Some(p) = alternation(terms).1 else {
            return;
        };
        let re = Regex::new(&p).unwrap();
        let matcher = Matcher::new(terms);
        for text in texts {
            let mut ours = vec![];
            matcher.each(text, |s, e, i| ours.push((s, e, i)));
            assert_eq!(ours, by_regex(&re, text), "{terms:?} on {text:?}");
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_list_of_twenty_thousand_terms_matches() {
        let terms: Vec<String> = (0..20_000)
            .map(|i| format!("term number {i} of a very long list"))
            .collect();
        let m = Matcher::new(&terms);
        let text = "x term number 19999 of a very long lists, term number 7 of a very long list";
        let mut found = vec![];
        m.each(text, |s, e, i| {
            found.push((&text[s..e], m.terms()[i].as_str()))
        });
        assert_eq!(
            found,
            [
                (
                    "term number 19999 of a very long lists",
                    "term number 19999 of a very long list"
                ),
                (
                    "term number 7 of a very long list",
                    "term number 7 of a very long list"
                ),
            ]
        );
    }

    #[test]
    fn matches_are_the_regex_alternation_s() {
        let terms = strings(&[
            "ai",
            "AI",
            "artificial intelligence",
            "machine learning",
            "LLM",
            "GPT-4",
            "GPT-4o",
            "generative AI",
            "OpenAI",
            "language model",
            "large language model",
            "Sprachmodell*",
            "künstliche Intelligenz",
            "KI",
            "KI-Modell*",
            "über",
            "人工知能",
            "c++",
            "x-ray",
            "neural network",
            "ÉTÉ",
            "ß-test",
            "data",
            "model",
            "deep learning*",
            "robot",
        ]);
        let texts = strings(&[
            "",
            "AI and ai, Ai; AIs and LLMs, LLMes.",
            "said maintain ai_x xai ai2 2ai",
            "Artificial  Intelligence, artificial-intelligence, ARTIFICIAL\u{2010}INTELLIGENCE",
            "machine learnings machine- -learning machine\t\nlearning machinelearning",
            "GPT-4o GPT-4 GPT\u{2011}4O gpt-4 GPT-4os GPT-40",
            "generative AI vs generative ai",
            "OPENAI OpenAI openai OpenAIs",
            "large language models and language model",
            "Sprachmodelle Sprachmodellen sprachmodell Sprachmodellçx Sprachmodell-basiert",
            "Künstliche Intelligenz KÜNSTLICHE INTELLIGENZ künstliche intelligenzen",
            "KI-Modelle KI-Modell KI Modell KIs",
            "Über über ÜBER überall",
            "人工知能の研究と人工知能",
            "c++ and C++ c+++",
            "x-ray X-Ray x\u{2010}ray xray",
            "neural networks, neural-networkses",
            "été ÉTÉ Été",
            "μ-chip µ-chip Μ-CHIP ΘΕΌΣ ϑεός ϴεός",
            "ß-test ẞ-TEST SS-test",
            "data-driven model's models modeless",
            "deep learnings deep-learning deep learningxyz",
            "robots robotic robot_arm ROBOT",
            "ſtate ai\u{17F} aiſ",
            "Die KI, die KI-gestützte; KI.",
            "a   ai   b",
        ]);
        same_as_regex(&terms, &texts);
    }

    #[test]
    fn the_shipped_vocabularies_match_as_their_regexes_on_the_fixture_pages() {
        let config = crate::config::Config::load(std::path::Path::new("config.yml")).unwrap();
        let k = &config.keywords;
        let mut lists: Vec<&Vec<String>> = vec![&k.targets, &k.strong_targets];
        lists.extend(k.ambiguous.iter().map(|a| &a.context));
        for v in k.languages.values() {
            lists.extend([&v.targets, &v.strong_targets]);
            lists.extend(v.ambiguous.iter().map(|a| &a.context));
        }
        let mut texts = Vec::new();
        for f in [
            "tests/fixtures/relevance-ml/pages.yml",
            "tests/fixtures/relevance/ai_pages.yml",
            "tests/fixtures/relevance/space_pages.yml",
        ] {
            let raw = std::fs::read_to_string(f).unwrap();
            texts.extend(raw.split("\n\n").map(str::to_string));
            texts.push(raw);
        }
        for terms in lists {
            same_as_regex(terms, &texts);
        }
    }
}
