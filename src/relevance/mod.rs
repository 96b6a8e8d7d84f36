//! The relevance judgement, computable from a stored record alone (title and
//! text; the lede is the first paragraph that is mostly prose), so that crawl
//! and build agree.
//!
//! Everything it knows about the topic comes from `config.yml`'s `keywords`:
//! the broad `targets`, the `strong_targets` (terms only a story on the topic
//! uses), the `ambiguous` strong terms with their context words, and the
//! score's weights. A page is relevant when it passes
//!
//! 1. **the two-tier gate**: at least `min_target_mentions` broad mentions and
//!    at least `min_strong_mentions` strong mentions in title and text, and
//! 2. **the score**: a `relevance_score` in [0, 1] of at least
//!    `min_relevance_score`. The score is a logistic model ([`model`], weights
//!    in `keywords.model`, fitted on labelled articles by
//!    `scripts/relevance-fit.py`) over the [`evidence`]: strong mentions in the
//!    story's own prose (not in menus or headline lists, see [`prose`]; not the
//!    same words repeated; an ambiguous term such as `AI` only with a context
//!    word in its paragraph), how many of the story's paragraphs mention the
//!    topic and how many of its first three, whether the title or lede does,
//!    whether the title names a broad or a `related` term, how many distinct
//!    strong terms appear, and the length. Without a model it is the weighted
//!    mean of [`score`]'s parts. A page with fewer than `min_article_words`
//!    prose words is thin and scores 0. The reasons list each feature's effect,
//!    largest first.
//!
//! The publisher's own labels (section, keywords, URL section; see
//! [`publisher`]) are shown beside the verdict when the page is at hand, and
//! are not part of it: a record stores title and text only.
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
//!
//! Crawl and build agree because the verdict (`Rule::judge(lang).verdict`;
//! `is_relevant` and `evaluate` give the same) depends on `keywords`, title,
//! text and `lang` alone: the extractor judges with the `lang` it stores and
//! the build's pass 1 reads that same `lang`; no `lang`, or one without a
//! `keywords.languages` entry, means the English lists. `Rule::new` builds
//! nothing: each language's matchers are built on its first page.

mod evidence;
mod keywords;
mod matcher;
mod model;
pub mod prose;
mod publisher;
mod score;

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;

pub use evidence::Evidence;
pub use keywords::{Ambiguous, Keywords, LangCode, ScoreWeights, Vocabulary};
use matcher::Matcher;
pub use model::{Effect, FEATURES, Model};
pub use publisher::Publisher;

/// A rule built once from `config.yml`'s `keywords`. Each language's
/// vocabulary is compiled the first time a page in that language is judged
/// (and English's the first time a page falls back to it), so a command that
/// judges one page pays for one vocabulary.
#[derive(Debug, Clone)]
pub struct Rule {
    pub keywords: Keywords,
    /// The top-level lists: English, and the fallback.
    fallback: OnceLock<Vocab>,
    /// `keywords.languages`, in code order.
    languages: Vec<(String, OnceLock<Vocab>)>,
}

/// One language's vocabulary, compiled.
#[derive(Debug, Clone)]
pub(crate) struct Vocab {
    strong: Matcher,
    broad: Matcher,
    /// `related`: topic-neighbourhood words, looked for in the title.
    related: Matcher,
    /// For each strong term (in `strong`'s order), its `ambiguous` group.
    ambiguous_group: Vec<Option<usize>>,
    /// For each `ambiguous` group, its context words.
    context: Vec<Matcher>,
}

impl Vocab {
    fn new(
        targets: &[String],
        strong_targets: &[String],
        related: &[String],
        ambiguous: &[Ambiguous],
    ) -> Vocab {
        let strong = Matcher::new(strong_targets);
        let ambiguous_group = strong
            .terms()
            .iter()
            .map(|t| ambiguous.iter().position(|a| a.terms.contains(t)))
            .collect();
        let context = ambiguous.iter().map(|a| Matcher::new(&a.context)).collect();
        Vocab {
            broad: Matcher::new(targets),
            related: Matcher::new(related),
            strong,
            ambiguous_group,
            context,
        }
    }
}

/// The rule with the vocabulary of one language: what judges a page.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    keywords: &'a Keywords,
    vocab: &'a Vocab,
    /// The `keywords.languages` code whose lists judge, `None` for the English lists.
    listed: Option<&'a str>,
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
    /// Whose lists judged: a `keywords.languages` code, or `en` for the
    /// top-level lists (English, and the fallback).
    pub vocabulary: String,
    /// Strong mentions in title and text, wherever they are.
    pub strong_mentions: u32,
    pub broad_mentions: u32,
    pub strong_terms: Vec<TermCount>,
    pub broad_terms: Vec<TermCount>,
    /// A strong term in the title or the first paragraph (raw, as the old rule saw it).
    pub strong_in_title_or_lede: bool,
    /// Strong mentions per 1,000 words of text (raw).
    pub density: f64,
    /// The two-tier gate passed.
    pub gate: bool,
    /// Fewer prose words than `min_article_words`: score 0.
    pub thin: bool,
    /// `relevance_score`, in [0, 1], rounded to 3 decimals.
    pub score: f64,
    /// The score a relevant page needs (`min_relevance_score`).
    pub min_score: f64,
    pub evidence: Evidence,
    /// The model's features: value, weight and effect on the score (weights
    /// 0 without a `keywords.model`). `scripts/relevance-fit.py` reads them.
    pub features: Vec<Effect>,
    pub relevant: bool,
    /// The verdict in one line.
    pub reason: String,
    /// How the score was reached, one part a line.
    pub reasons: Vec<String>,
    /// The publisher's own section and keywords and the URL's section, when
    /// the page was at hand (`extract`, `check-url`): shown, not scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<Publisher>,
}

/// Words in a text: runs of letters or digits, where every two characters of
/// a script written without spaces (Chinese characters, Japanese kana; see
/// [`prose::is_unspaced`]) count as one word (a Chinese word is one to two
/// characters, a Japanese one two to three), so the word thresholds mean
/// about the same length of story in every language.
pub fn word_count(text: &str) -> usize {
    let mut n = 0;
    let mut unspaced: usize = 0;
    let mut in_word = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // ASCII by the byte (no ASCII character is unspaced script).
        let b = bytes[i];
        if b.is_ascii() {
            i += 1;
            let w = b.is_ascii_alphanumeric();
            n += usize::from(w && !in_word);
            in_word = w;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        i += c.len_utf8();
        if prose::is_unspaced(c) {
            unspaced += 1;
            in_word = false;
            continue;
        }
        let w = c.is_alphanumeric();
        if w && !in_word {
            n += 1;
        }
        in_word = w;
    }
    n + unspaced.div_ceil(2)
}

/// The first non-empty paragraph of the text (the old rule's lede).
pub fn lede(text: &str) -> &str {
    text.split('\n')
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or("")
}

impl Rule {
    /// The rule; nothing is compiled until a page is judged.
    pub fn new(keywords: &Keywords) -> Rule {
        Rule {
            keywords: keywords.clone(),
            fallback: OnceLock::new(),
            languages: keywords
                .languages
                .keys()
                .map(|code| (code.0.clone(), OnceLock::new()))
                .collect(),
        }
    }

    /// The rule for a page whose `lang` (ISO 639-1) is `lang`: that
    /// language's vocabulary when `keywords.languages` has one, otherwise
    /// the English lists (also for `None`: a record without `lang`).
    pub fn judge(&self, lang: Option<&str>) -> Judge<'_> {
        let k = &self.keywords;
        let listed = lang.and_then(|l| {
            let i = self
                .languages
                .binary_search_by(|(code, _)| code.as_str().cmp(l))
                .ok()?;
            let v = &k.languages.iter().nth(i)?.1;
            let (code, cell) = &self.languages[i];
            let vocab = cell.get_or_init(|| {
                Vocab::new(&v.targets, &v.strong_targets, &v.related, &v.ambiguous)
            });
            Some((code.as_str(), vocab))
        });
        match listed {
            Some((code, vocab)) => Judge {
                keywords: k,
                vocab,
                listed: Some(code),
            },
            None => Judge {
                keywords: k,
                vocab: self.english(),
                listed: None,
            },
        }
    }

    fn english(&self) -> &Vocab {
        let k = &self.keywords;
        self.fallback
            .get_or_init(|| Vocab::new(&k.targets, &k.strong_targets, &k.related, &k.ambiguous))
    }

    /// [`Judge::is_relevant`] with the English lists.
    pub fn is_relevant(&self, title: &str, text: &str) -> bool {
        self.judge(None).is_relevant(title, text)
    }

    /// [`Judge::verdict`] with the English lists.
    pub fn verdict(&self, title: &str, text: &str) -> (bool, f64) {
        self.judge(None).verdict(title, text)
    }

    /// [`Judge::score`] with the English lists.
    pub fn score(&self, title: &str, text: &str) -> f64 {
        self.judge(None).score(title, text)
    }

    /// [`Judge::evaluate`] with the English lists.
    pub fn evaluate(&self, title: &str, text: &str) -> Relevance {
        self.judge(None).evaluate(title, text)
    }

    /// [`Judge::hint`] with the English lists (a string seen before its
    /// page is fetched has no language of its own).
    pub fn hint(&self, text: &str) -> f64 {
        self.judge(None).hint(text)
    }
}

impl Judge<'_> {
    /// The two-tier gate on raw counts (cheap: no captures).
    fn gate(&self, title: &str, text: &str) -> (bool, u32, u32) {
        let k = self.keywords;
        let broad = self.vocab.broad.total(title) + self.vocab.broad.total(text);
        let strong = self.vocab.strong.total(title) + self.vocab.strong.total(text);
        (gate_passes(k, broad, strong), broad, strong)
    }

    /// Just the verdict of [`Rule::evaluate`], computed without per-term
    /// tallies or reasons (what `scraper build` needs, for every record).
    pub fn is_relevant(&self, title: &str, text: &str) -> bool {
        self.verdict(title, text).0
    }

    /// The verdict and the score (0 when the gate fails: the score is not computed).
    pub fn verdict(&self, title: &str, text: &str) -> (bool, f64) {
        if !self.gate(title, text).0 {
            return (false, 0.0);
        }
        let score = self.score(title, text);
        (score >= self.keywords.min_relevance_score, score)
    }

    /// The `relevance_score` alone, rounded to 3 decimals.
    pub fn score(&self, title: &str, text: &str) -> f64 {
        let ev = evidence::gather(self.vocab, title, text);
        round3(score::value(&ev, self.keywords))
    }

    /// Evaluate the rule on a title and a text whose paragraphs are separated by `\n`.
    pub fn evaluate(&self, title: &str, text: &str) -> Relevance {
        let k = self.keywords;
        let mut strong_counts = HashMap::new();
        let title_strong = self.vocab.strong.count(title, &mut strong_counts);
        let body_strong = self.vocab.strong.count(text, &mut strong_counts);
        let strong_mentions = title_strong + body_strong;
        let mut broad_counts = HashMap::new();
        let broad_mentions = self.vocab.broad.count(title, &mut broad_counts)
            + self.vocab.broad.count(text, &mut broad_counts);
        let strong_in_title_or_lede = title_strong > 0 || self.vocab.strong.any(lede(text));
        let words = word_count(text);
        let density = if words == 0 {
            0.0
        } else {
            f64::from(body_strong) * 1000.0 / words as f64
        };
        let gate = gate_passes(k, broad_mentions, strong_mentions);
        let evidence = evidence::gather(self.vocab, title, text);
        let parts = score::parts(&evidence, &k.score, k.min_article_words);
        let score = round3(score::value(&evidence, k));
        let features = score::effects(&evidence, k);
        let relevant = gate && score >= k.min_relevance_score;
        let vocabulary = self.listed.unwrap_or("en").to_string();
        let mut reasons = vec![match self.listed {
            Some(code) => format!("vocabulary: keywords.languages.{code}"),
            None => "vocabulary: the top-level (English) lists".to_string(),
        }];
        reasons.push(format!(
            "gate {}: {broad_mentions} broad mention(s) (>= {} needed; strong ones count too), \
             {strong_mentions} strong (>= {} needed)",
            if gate { "passed" } else { "failed" },
            k.min_target_mentions,
            k.min_strong_mentions
        ));
        match &k.model {
            Some(m) if !parts.thin => {
                reasons.extend(score::model_reasons(&evidence, m, &features));
            }
            // A thin page: the one line that says so.
            Some(_) => reasons.extend(
                score::reasons(&evidence, &parts, k.min_article_words)
                    .into_iter()
                    .take(1),
            ),
            None => reasons.extend(score::reasons(&evidence, &parts, k.min_article_words)),
        }
        let reason = if !gate {
            format!(
                "not relevant: the two-tier gate needs {} broad and {} strong mention(s), found \
                 {broad_mentions} and {strong_mentions}",
                k.min_target_mentions, k.min_strong_mentions
            )
        } else if parts.thin {
            format!(
                "not relevant: a thin page ({} prose words, {} needed)",
                evidence.prose_words, k.min_article_words
            )
        } else {
            format!(
                "{}: relevance score {score:.2} {} {:.2} (min_relevance_score)",
                if relevant { "relevant" } else { "not relevant" },
                if relevant { ">=" } else { "<" },
                k.min_relevance_score
            )
        };
        Relevance {
            vocabulary,
            strong_mentions,
            broad_mentions,
            strong_terms: self.vocab.strong.tally(strong_counts),
            broad_terms: self.vocab.broad.tally(broad_counts),
            strong_in_title_or_lede,
            density,
            gate,
            thin: parts.thin,
            score,
            min_score: k.min_relevance_score,
            evidence,
            features,
            relevant,
            reason,
            reasons,
            publisher: None,
        }
    }

    /// A cheap relevance hint in [0, 1] for a short string known before a
    /// page is fetched: anchor text, a URL slug, a feed item's title. Strong
    /// terms count fully (an `ambiguous` one half), broad terms a third;
    /// `1 - 0.5^weight`, so one strong term gives 0.5, two give 0.75, nothing
    /// gives 0. Text without any capital letter (a URL slug such as
    /// `new-ai-model`) is also read in capitals with `_`, `/` and `+` as
    /// spaces, so case-sensitive terms (`AI`, `OpenAI`) match it; the better
    /// of the two readings counts.
    pub fn hint(&self, text: &str) -> f64 {
        let weigh = |t: &str| {
            let mut w = 0.0;
            self.vocab.strong.each(t, |_, _, i| {
                w += if self.vocab.ambiguous_group[i].is_some() {
                    0.5
                } else {
                    1.0
                };
            });
            w + f64::from(self.vocab.broad.total(t)) / 3.0
        };
        let mut weight = weigh(text);
        if !text.chars().any(char::is_uppercase) {
            let spaced: String = text
                .chars()
                .map(|c| match c {
                    '_' | '/' | '+' => ' ',
                    c => c.to_ascii_uppercase(),
                })
                .collect();
            weight = f64::max(weight, weigh(&spaced));
        }
        1.0 - 0.5_f64.powf(weight)
    }
}

/// The two-tier gate: enough topic mentions (a strong mention is a broad one
/// too, so a story naming ChatGPT throughout is not short of broad words) and
/// enough strong ones.
fn gate_passes(k: &Keywords, broad: u32, strong: u32) -> bool {
    broad.max(strong) >= k.min_target_mentions && strong >= k.min_strong_mentions
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Relevance {
    /// The verdict with the publisher's labels beside it (and a reason line
    /// saying which name the topic); the verdict and score do not change.
    pub fn with_publisher(mut self, p: Publisher) -> Relevance {
        let mut found = Vec::new();
        if let Some(s) = &p.section {
            found.push(format!("section {s:?}"));
        }
        if !p.keywords.is_empty() {
            found.push(format!("{} keyword(s)", p.keywords.len()));
        }
        if let Some(s) = &p.url_section {
            found.push(format!("URL section {s}"));
        }
        if !found.is_empty() {
            let on = if p.on_topic.is_empty() {
                "none names the topic".to_string()
            } else {
                format!("naming the topic: {}", p.on_topic.join(", "))
            };
            self.reasons.push(format!(
                "publisher labels (shown, not scored: a record stores title and text only): {}; {on}",
                found.join(", ")
            ));
        }
        self.publisher = Some(p);
        self
    }

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
        let mut rand = crate::xorshift::XorShift32::new(0x1234_5678);
        let mut next = |n: usize| rand.below(n);
        // Sentences of 5 to 14 words (so some are prose), paragraphs of 1 to 4
        // sentences, a word or a term at each place.
        let words = [
            "the", "market", "said", "people", "rose", "week", "company", "new", "team", "plan",
        ];
        let mut seen = [0usize; 2];
        for _ in 0..3000 {
            let mut text = String::new();
            let sentences = 1 + next(40);
            let filler = 1 + next(12);
            for _ in 0..sentences {
                let len = 5 + next(10);
                for w in 0..len {
                    let p = if next(filler + 1) == 0 {
                        pieces[next(pieces.len())]
                    } else {
                        words[next(words.len())]
                    };
                    if w == 0 {
                        text.push_str("Then ");
                    }
                    text.push_str(p);
                    text.push(' ');
                }
                text.push_str(if next(3) == 0 { ".\n" } else { ". " });
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
    fn stems_and_scripts_without_spaces() {
        let r = rule(
            &[
                "sprachmodell*",
                "künstliche* intelligenz",
                "KI",
                "人工智能",
                "生成AI",
                "AI",
                "언어 모델",
            ],
            &[],
        );
        let table: &[(&str, u32)] = &[
            ("Das Sprachmodell und die Sprachmodelle", 2),
            ("großen Sprachmodellen", 1),
            ("Künstlicher Intelligenz", 1),
            ("künstlichen Intelligenz", 1),
            ("KI-Modelle", 1),
            ("Kiel", 0),
            ("他说人工智能正在改变教育。", 1),
            ("生成AIの活用", 1),
            ("AI芯片和OpenAI", 1),
            ("새로운 언어 모델을 공개", 1),
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
        let text = [
            "OpenAI on Tuesday released a new large language model that it says reasons better.",
            "The AI model was trained on more data than its predecessor, and ChatGPT users \
             get it first, the company said in a blog post.",
            "Researchers said machine learning benchmarks improved across the board, with the \
             largest gains on maths problems and on code.",
            FILLER,
            "Rivals such as Anthropic and Google are expected to answer with models of their \
             own before the end of the year, analysts said.",
            FILLER,
        ]
        .join("\n");
        let rel = r.evaluate("OpenAI launches a new model", &text);
        assert!(rel.relevant, "{rel:?}");
        assert!(rel.strong_in_title_or_lede);
        assert!(rel.score > 0.8, "{rel:?}");
        assert!(rel.reason.contains("relevance score"), "{}", rel.reason);
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
    fn a_listing_of_ai_headlines_is_chrome_not_prose() {
        // The gate alone says yes; the headlines are not prose sentences, so
        // nothing counts and the page is thin.
        let r = shipped();
        let text = paragraphs(
            "OpenAI unveils GPT-5",
            "Anthropic's Claude gets a new AI agent mode",
            20,
        );
        let rel = r.evaluate("AI news", &text);
        assert!(rel.gate, "{rel:?}");
        assert!(!rel.relevant, "{rel:?}");
        assert_eq!(rel.evidence.prose_mentions, 0);
        assert!(rel.evidence.chrome_mentions >= 40, "{rel:?}");
    }

    #[test]
    fn an_ai_story_naming_its_topic_only_in_the_body_densely_is_relevant() {
        let r = shipped();
        let text = [
            "Maria Lopez used to spend her evenings answering email from parents.",
            "Now a chatbot drafts the replies. The large language model behind it \
             was tuned by the district, which says the AI saves teachers hours.",
            "Teachers check every draft before it goes out, and the chatbot never \
             sends anything on its own, the district's technology office said.",
            FILLER,
            "Critics worry that machine learning systems repeat the biases of the \
             text they were trained on, and the union wants an audit of the model.",
            "Lopez says she now spends the hour with her own children instead, and \
             that the AI tool gets the tone right more often than not.",
        ]
        .join("\n");
        let rel = r.evaluate("The assistant that writes a teacher's email", &text);
        assert!(!rel.strong_in_title_or_lede);
        assert!(rel.relevant, "{rel:?}");
        assert_eq!(rel.evidence.title_mentions, 0);
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
        // Other scripts counted as by characters: Greek words, CJK by pairs.
        assert_eq!(word_count("Λόγος και ÉTÉ déjà-vu"), 5);
        assert_eq!(word_count("東京で AI 研究"), 4);
    }
}
