//! The two-tier relevance rule, computable from a stored record alone (title
//! and text; the lede is the first paragraph), so that crawl and build agree.
//!
//! Two vocabularies come from `config.yml`: the broad `targets` and the
//! `strong_targets` (terms only an AI story uses). A page is relevant when it
//! has at least `min_target_mentions` broad mentions and either
//!
//! * **title/lede rule**: at least `min_strong_mentions` strong mentions with
//!   one of them in the title or the lede (first non-empty paragraph), or
//! * **density rule**: at least `min_dense_mentions` strong mentions in the
//!   body and at least `min_strong_density` of them per 1,000 body words.
//!
//! Matching rules for a term (which may be a phrase):
//! * words match whole words only (`AI` is not the letters in `said`);
//! * a word written with any capital letter (`AI`, `LLM`, `OpenAI`, `Gemini`)
//!   matches that exact spelling or its all-capitals form (`OPENAI`), so `Ai`
//!   and `gemini` do not match; an all-lowercase word matches in any case;
//! * the last word may take a plural `s`/`es` (`large language models`, `LLMs`);
//! * words of a phrase may be separated by any whitespace or a hyphen
//!   (`machine-learning`);
//! * matches do not overlap; at one position the longest term wins, so
//!   `generative AI` counts once, as `generative AI`.

use std::collections::HashMap;

use regex::Regex;
use serde::Serialize;

use crate::config::Keywords;

/// A compiled rule built once from `config.yml`'s `keywords`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub keywords: Keywords,
    strong: Matcher,
    broad: Matcher,
}

/// How often one term matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermCount {
    pub term: String,
    pub count: u32,
}

/// The rule's verdict and the evidence for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Relevance {
    pub strong_mentions: u32,
    pub broad_mentions: u32,
    pub strong_terms: Vec<TermCount>,
    pub broad_terms: Vec<TermCount>,
    pub strong_in_title_or_lede: bool,
    /// Strong mentions per 1,000 words.
    pub density: f64,
    pub relevant: bool,
    /// Which rule decided, in words.
    pub reason: String,
}

/// One vocabulary compiled into a single leftmost-longest alternation.
#[derive(Debug, Clone)]
struct Matcher {
    /// `None` when the vocabulary is empty.
    regex: Option<Regex>,
    /// Term for capture group `i + 1`.
    terms: Vec<String>,
}

impl Matcher {
    fn new(terms: &[String]) -> Matcher {
        let mut sorted: Vec<&String> = terms.iter().filter(|t| !t.trim().is_empty()).collect();
        sorted.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        sorted.dedup();
        if sorted.is_empty() {
            return Matcher {
                regex: None,
                terms: vec![],
            };
        }
        let alternation: Vec<String> = sorted
            .iter()
            .map(|t| format!("({})", term_pattern(t)))
            .collect();
        // Every piece is escaped with `regex::escape`, so the pattern is valid;
        // a failure would only be a size limit, which we report as "no matcher".
        let regex = Regex::new(&alternation.join("|")).ok();
        Matcher {
            regex,
            terms: sorted.into_iter().cloned().collect(),
        }
    }

    /// Count matches per term; returns (total, per-term counts).
    fn count(&self, text: &str, counts: &mut HashMap<usize, u32>) -> u32 {
        let Some(regex) = &self.regex else { return 0 };
        let mut total = 0;
        for caps in regex.captures_iter(text) {
            if let Some(i) = (1..caps.len()).find(|&i| caps.get(i).is_some()) {
                *counts.entry(i - 1).or_default() += 1;
                total += 1;
            }
        }
        total
    }

    /// Matches in `text`, without finding which term each is (no captures, so
    /// much cheaper than [`Matcher::count`], and always the same total).
    fn total(&self, text: &str) -> u32 {
        self.regex
            .as_ref()
            .map_or(0, |r| r.find_iter(text).count() as u32)
    }

    fn any(&self, text: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.is_match(text))
    }

    fn tally(&self, counts: HashMap<usize, u32>) -> Vec<TermCount> {
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
        pattern.push_str(&word_pattern(word));
    }
    let plural_ok = last.is_some_and(|c| c.is_alphabetic());
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

/// Words in a text: runs of letters or digits.
pub fn word_count(text: &str) -> usize {
    let mut n = 0;
    let mut in_word = false;
    for c in text.chars() {
        let w = c.is_alphanumeric();
        if w && !in_word {
            n += 1;
        }
        in_word = w;
    }
    n
}

/// The lede: the first non-empty paragraph of the text.
pub fn lede(text: &str) -> &str {
    text.split('\n')
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or("")
}

impl Rule {
    pub fn new(keywords: &Keywords) -> Rule {
        Rule {
            keywords: keywords.clone(),
            strong: Matcher::new(&keywords.strong_targets),
            broad: Matcher::new(&keywords.targets),
        }
    }

    /// A cheap relevance hint in [0, 1] for a short string known before a
    /// page is fetched: anchor text, a URL slug, a feed item's title. Strong
    /// terms count fully, broad terms a third; `1 - 0.5^weight`, so one strong
    /// term gives 0.5, two give 0.75, nothing gives 0. Text without any capital
    /// letter (a URL slug such as `new-ai-model`) is also read in capitals with
    /// `_`, `/` and `+` as spaces, so case-sensitive terms (`AI`, `OpenAI`)
    /// match it; the better of the two readings counts.
    pub fn hint(&self, text: &str) -> f64 {
        let weigh =
            |t: &str| f64::from(self.strong.total(t)) + f64::from(self.broad.total(t)) / 3.0;
        let mut weight = weigh(text);
        if !text.chars().any(char::is_uppercase) {
            let spaced: String = text
                .chars()
                .map(|c| match c {
                    '_' | '/' | '+' => ' ',
                    c => c.to_ascii_uppercase(),
                })
                .collect();
            weight = weight.max(weigh(&spaced));
        }
        1.0 - 0.5_f64.powf(weight)
    }

    /// Just the verdict of [`Rule::evaluate`], computed without per-term
    /// tallies or the reason (what `scraper build` needs, for every record).
    pub fn is_relevant(&self, title: &str, text: &str) -> bool {
        let k = &self.keywords;
        let broad_mentions = self.broad.total(title) + self.broad.total(text);
        if broad_mentions < k.min_target_mentions {
            return false;
        }
        let title_strong = self.strong.total(title);
        let body_strong = self.strong.total(text);
        let strong_mentions = title_strong + body_strong;
        let lede_rule = strong_mentions >= k.min_strong_mentions
            && (title_strong > 0 || self.strong.any(lede(text)));
        lede_rule || {
            let words = word_count(text);
            let density = if words == 0 {
                0.0
            } else {
                f64::from(body_strong) * 1000.0 / words as f64
            };
            body_strong >= k.min_dense_mentions && density >= k.min_strong_density
        }
    }

    /// Evaluate the rule on a title and a text whose paragraphs are separated by `\n`.
    pub fn evaluate(&self, title: &str, text: &str) -> Relevance {
        let k = &self.keywords;
        let mut strong_counts = HashMap::new();
        let title_strong = self.strong.count(title, &mut strong_counts);
        let body_strong = self.strong.count(text, &mut strong_counts);
        let strong_mentions = title_strong + body_strong;
        let mut broad_counts = HashMap::new();
        let broad_mentions =
            self.broad.count(title, &mut broad_counts) + self.broad.count(text, &mut broad_counts);
        let strong_in_title_or_lede = title_strong > 0 || self.strong.any(lede(text));
        let words = word_count(text);
        let density = if words == 0 {
            0.0
        } else {
            f64::from(body_strong) * 1000.0 / words as f64
        };

        let broad_ok = broad_mentions >= k.min_target_mentions;
        let lede_rule = strong_mentions >= k.min_strong_mentions && strong_in_title_or_lede;
        let dense_rule = body_strong >= k.min_dense_mentions && density >= k.min_strong_density;
        let relevant = broad_ok && (lede_rule || dense_rule);
        let reason = if !broad_ok {
            format!(
                "not relevant: {broad_mentions} broad mention(s), {} needed (min_target_mentions)",
                k.min_target_mentions
            )
        } else if lede_rule {
            format!(
                "relevant by the title/lede rule: {strong_mentions} strong mention(s) (>= {}) \
                 with one in the title or lede",
                k.min_strong_mentions
            )
        } else if dense_rule {
            format!(
                "relevant by the density rule: {body_strong} strong mention(s) in the body \
                 (>= {}) at {density:.1} per 1,000 words (>= {})",
                k.min_dense_mentions, k.min_strong_density
            )
        } else {
            format!(
                "not relevant: {strong_mentions} strong mention(s) (title/lede rule needs >= {} \
                 and one in the title or lede: {}); density {density:.1} per 1,000 words \
                 (density rule needs >= {} with >= {} mentions)",
                k.min_strong_mentions,
                if strong_in_title_or_lede { "yes" } else { "no" },
                k.min_strong_density,
                k.min_dense_mentions
            )
        };
        Relevance {
            strong_mentions,
            broad_mentions,
            strong_terms: self.strong.tally(strong_counts),
            broad_terms: self.broad.tally(broad_counts),
            strong_in_title_or_lede,
            density,
            relevant,
            reason,
        }
    }
}

impl Relevance {
    /// Broad terms found, most frequent first: the record's `keywords`.
    pub fn keywords(&self) -> Vec<String> {
        self.broad_terms.iter().map(|t| t.term.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// The shipped `config.yml` keywords, so the tests check what users run.
    fn shipped() -> Rule {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.yml");
        Rule::new(&Config::load(&path).expect("shipped config loads").keywords)
    }

    fn rule(strong: &[&str], broad: &[&str]) -> Rule {
        Rule::new(&Keywords {
            strong_targets: strong.iter().map(|s| s.to_string()).collect(),
            targets: broad.iter().map(|s| s.to_string()).collect(),
            ..Keywords::default()
        })
    }

    /// `is_relevant` gives `evaluate`'s verdict, on texts that sit on every
    /// side of every threshold.
    #[test]
    fn is_relevant_agrees_with_evaluate() {
        let r = shipped();
        let pieces = [
            "AI",
            "ai",
            "OpenAI",
            "chatbot",
            "language model",
            "large language model",
            "machine learning",
            "models",
            "robots",
            "data",
            "cloud",
            "the",
            "market",
            "said",
            "people",
            "GPT-4o",
            "agentic",
            "Ai",
            "email",
            "\n",
            "\n\n",
            ".",
            "AI-powered",
        ];
        let mut x = 0x1234_5678_u32;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as usize % n
        };
        let mut seen = [0usize; 2];
        for _ in 0..3000 {
            let mut text = String::new();
            let len = 1 + next(60);
            let filler = 1 + next(6);
            for _ in 0..len {
                let p = if next(filler + 1) == 0 {
                    pieces[next(pieces.len())]
                } else {
                    "word"
                };
                text.push_str(p);
                text.push(' ');
            }
            let title = if next(2) == 0 {
                pieces[next(pieces.len())]
            } else {
                "News"
            };
            let want = r.evaluate(title, &text).relevant;
            assert_eq!(r.is_relevant(title, &text), want, "{title:?} {text:?}");
            seen[usize::from(want)] += 1;
        }
        assert!(seen[0] > 100 && seen[1] > 100, "{seen:?}");
    }

    fn count(rule: &Rule, text: &str) -> u32 {
        rule.evaluate("", text).strong_mentions
    }

    #[test]
    fn term_matching_table() {
        let r = shipped();
        let table: &[(&str, u32)] = &[
            ("AI", 1),
            ("The AI said", 1),
            ("she said it was paid", 0),
            ("Ai Weiwei", 0),
            ("ai", 0),
            ("AI-powered tools", 1),
            ("OpenAI's new model", 1),
            ("OPENAI", 1),
            ("Openai", 0),
            ("GPT-4o is here", 1),
            ("GPT-4 and GPT-4o", 2),
            ("GPT-40", 0),
            ("large language models", 1),
            ("Large Language Model", 1),
            ("large\nlanguage  model", 1),
            ("LLMs and LLM", 2),
            ("LLMA", 0),
            ("generative AI", 1),
            ("Generative AI tools", 1),
            ("machine-learning systems", 1),
            ("Machine Learning", 1),
            ("the gemini zodiac", 0),
            ("Google Gemini", 1),
            ("a llama in the field", 0),
            ("Meta's Llama 3", 1),
            ("chatbots", 1),
            ("Chatbot", 1),
            ("GenAI", 1),
            ("MAIN DISH", 0),
            ("agentic workflows", 1),
        ];
        for (text, want) in table {
            assert_eq!(count(&r, text), *want, "{text:?}");
        }
    }

    #[test]
    fn longest_term_wins_and_counts_are_reported() {
        let r = rule(&["AI", "generative AI", "AI model"], &["ai"]);
        let rel = r.evaluate("", "Generative AI is an AI model. AI again.");
        assert_eq!(rel.strong_mentions, 3);
        let terms: Vec<(&str, u32)> = rel
            .strong_terms
            .iter()
            .map(|t| (t.term.as_str(), t.count))
            .collect();
        assert_eq!(
            terms,
            vec![("AI", 1), ("AI model", 1), ("generative AI", 1)]
        );
        assert_eq!(rel.broad_mentions, 3);
        assert_eq!(rel.keywords(), vec!["ai".to_string()]);
    }

    fn paragraphs(lede: &str, body: &str, n: usize) -> String {
        let mut text = String::from(lede);
        for _ in 0..n {
            text.push('\n');
            text.push_str(body);
        }
        text
    }

    const FILLER: &str = "The company said the change would roll out over the coming weeks, \
        starting with customers in North America and Europe, and that prices would not change \
        for existing subscribers who signed up before the end of the year.";

    #[test]
    fn a_real_ai_story_is_relevant() {
        let r = shipped();
        let text = paragraphs(
            "OpenAI on Tuesday released a new large language model that it says reasons better.",
            "The AI model was trained on more data, and ChatGPT users get it first. \
             Researchers said machine learning benchmarks improved.",
            3,
        );
        let rel = r.evaluate("OpenAI launches a new model", &text);
        assert!(rel.relevant, "{rel:?}");
        assert!(rel.strong_in_title_or_lede);
        assert!(rel.reason.contains("title/lede"), "{}", rel.reason);
    }

    #[test]
    fn general_tech_story_with_ai_in_chrome_only_is_not_relevant() {
        // The extractor prunes the menus; what reaches the rule is the story,
        // which mentions AI once in passing, deep in the body.
        let r = shipped();
        let mut text = paragraphs(
            "The new phone has a bigger battery and a brighter screen.",
            FILLER,
            12,
        );
        text.push_str("\nThe camera app uses some AI for night shots.\n");
        text.push_str(&paragraphs(FILLER, FILLER, 6));
        let rel = r.evaluate("Review: the new phone lasts two days", &text);
        assert!(!rel.relevant, "{rel:?}");
        assert_eq!(rel.strong_mentions, 1);
    }

    #[test]
    fn menus_saying_ai_twenty_times_do_not_make_a_story_relevant_in_the_lede() {
        // Even if a menu leaked in as short lines after the lede, the story
        // carries no strong term in its title or lede and is not dense enough.
        let r = shipped();
        let mut text = paragraphs(
            "The new phone has a bigger battery and a brighter screen.",
            FILLER,
            80,
        );
        for _ in 0..4 {
            text.push_str("\nAI");
        }
        let rel = r.evaluate("Review: the new phone lasts two days", &text);
        assert!(!rel.relevant, "{rel:?}");
    }

    #[test]
    fn a_listing_dense_with_ai_headlines_matches_the_rule_but_is_not_an_article() {
        // Relevance alone says yes (the article signal and prose ratio,
        // checked by the extractor, keep such pages out: see tests/it/extract.rs).
        let r = shipped();
        let text = paragraphs(
            "OpenAI unveils GPT-5",
            "Anthropic's Claude gets a new AI agent mode",
            20,
        );
        let rel = r.evaluate("AI news", &text);
        assert!(rel.relevant, "{rel:?}");
    }

    #[test]
    fn an_ai_story_naming_its_topic_only_in_the_body_densely_is_relevant() {
        let r = shipped();
        let text = paragraphs(
            "Maria Lopez used to spend her evenings answering email from parents.",
            "Now a chatbot drafts the replies. The large language model behind it \
             was tuned by the district, which says the AI saves teachers hours.",
            6,
        );
        let rel = r.evaluate("The assistant that writes a teacher's email", &text);
        assert!(!rel.strong_in_title_or_lede);
        assert!(rel.relevant, "{rel:?}");
        assert!(rel.reason.contains("density"), "{}", rel.reason);
    }

    #[test]
    fn a_long_story_with_few_body_mentions_is_not_dense() {
        let r = shipped();
        let mut text = paragraphs("A story about farming.", FILLER, 60);
        for _ in 0..5 {
            text.push_str("\nThe chatbot answered.");
        }
        let rel = r.evaluate("Farming today", &text);
        assert!(rel.density < 8.0, "{rel:?}");
        assert!(!rel.relevant);
    }

    #[test]
    fn empty_inputs_and_empty_vocabularies() {
        let r = shipped();
        let rel = r.evaluate("", "");
        assert!(!rel.relevant);
        assert_eq!(rel.density, 0.0);
        let none = rule(&[], &[]);
        assert!(!none.evaluate("AI", "AI AI AI").relevant);
    }

    #[test]
    fn hint_scores_short_strings() {
        let r = shipped();
        let table: &[(&str, f64, f64)] = &[
            ("", 0.0, 0.0),
            ("Weather for the weekend", 0.0, 0.0),
            ("OpenAI launches a new chatbot", 0.74, 1.0),
            ("new-ai-model-beats-benchmarks", 0.5, 1.0),
            ("/2024/05/openai-gpt-5-release", 0.7, 1.0),
            ("the-said-and-paid-story", 0.0, 0.0),
            ("Cloud software startup", 0.3, 0.7),
        ];
        for (text, lo, hi) in table {
            let h = r.hint(text);
            assert!((*lo..=*hi).contains(&h), "{text:?}: {h}");
        }
        assert!(r.hint("OpenAI and Anthropic") > r.hint("OpenAI"));
    }

    #[test]
    fn lede_and_words() {
        assert_eq!(lede("\n  \nFirst para.\nSecond."), "First para.");
        assert_eq!(word_count("GPT-4o is here, isn't it?"), 7);
    }
}
