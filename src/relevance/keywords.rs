//! The relevance rule's section of `config.yml` (`keywords:`): the
//! vocabularies, thresholds and score weights, and their validation. The rule
//! itself ([`super::Rule`]) is built from a [`Keywords`].

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// The two-tier relevance rule and the article test.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Keywords {
    /// Broad vocabulary (legacy word-count rule): counted and reported as `keywords`.
    pub targets: Vec<String>,
    /// Terms only an AI story uses.
    pub strong_targets: Vec<String>,
    /// Words of the topic's neighbourhood (robots, automation, algorithms)
    /// that every tech story uses in its body but that, in a title, say the
    /// story is about the topic's field: the model's `title_related` feature.
    pub related: Vec<String>,
    /// Broad mentions a page needs (in title + text).
    pub min_target_mentions: u32,
    /// Strong mentions a page needs (in title + text): the gate's second tier.
    pub min_strong_mentions: u32,
    /// Legacy (the old rule's density alternative, now part of the score's
    /// mentions): accepted so older configs load, not used by the rule.
    pub min_strong_density: f64,
    /// Legacy, with `min_strong_density`: accepted, not used by the rule.
    pub min_dense_mentions: u32,
    /// Share of text that must sit in paragraph-length blocks for a page to be an article.
    pub min_prose_ratio: f64,
    /// Strong terms with another meaning outside the topic, in groups that
    /// share the context words confirming the topic's meaning.
    pub ambiguous: Vec<Ambiguous>,
    /// `relevance_score` a page needs (0 to 1), on top of the two-tier gate.
    pub min_relevance_score: f64,
    /// Prose words a page needs; fewer make it a thin page (score 0).
    pub min_article_words: u32,
    /// How the score's parts are weighed (without a `model`), and the length
    /// the mentions are scaled to (`per_words`, with one too).
    pub score: ScoreWeights,
    /// The fitted logistic model (`scripts/relevance-fit.py` writes it): when
    /// present the score is its probability, otherwise the weighted mean of
    /// `score`'s parts.
    pub model: Option<super::model::Model>,
    /// Vocabularies of other languages, by ISO 639-1 code: a page whose `lang`
    /// is listed is judged with that language's `targets`, `strong_targets`
    /// and `ambiguous` instead of the lists above, which are English's and the
    /// fallback for every other page (and for a record without `lang`). The
    /// thresholds and weights above hold for every language.
    pub languages: BTreeMap<LangCode, Vocabulary>,
}

/// One language's topic vocabulary (`keywords.languages.<code>`), with the
/// same meaning and matching rules as the English lists of [`Keywords`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Vocabulary {
    pub targets: Vec<String>,
    pub strong_targets: Vec<String>,
    pub related: Vec<String>,
    pub ambiguous: Vec<Ambiguous>,
}

/// A `keywords.languages` key: an ISO 639-1 code (two lower-case letters,
/// as records' `lang`), other than `en`, whose lists are the top-level ones.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LangCode(pub String);

impl<'de> Deserialize<'de> for LangCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let code = String::deserialize(d)?;
        if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(serde::de::Error::custom(format!(
                "keywords.languages: `{code}` is not an ISO 639-1 code (two lower-case letters, \
                 such as de or zh)"
            )));
        }
        if code == "en" {
            return Err(serde::de::Error::custom(
                "keywords.languages: `en` is the top-level targets, strong_targets and \
                 ambiguous; list other languages here",
            ));
        }
        Ok(LangCode(code))
    }
}

/// Strong terms that also mean something else, and the words that, in the
/// same paragraph, confirm the topic's meaning.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ambiguous {
    pub terms: Vec<String>,
    pub context: Vec<String>,
}

/// Weights of the relevance score's parts (see `relevance::score`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScoreWeights {
    /// Weight of the number of strong mentions in prose.
    pub mentions: f64,
    /// Mentions that give the full mentions part.
    pub full_mentions: u32,
    /// In texts longer than this many prose words, mentions are scaled down
    /// to this length (0: never).
    pub per_words: u32,
    /// Weight of the share of paragraphs that mention the topic.
    pub spread: f64,
    /// Share of paragraphs that gives the full spread part.
    pub full_spread: f64,
    /// Weight of a strong term in the title or lede.
    pub title_or_lede: f64,
    /// Weight of the number of distinct strong terms.
    pub diversity: f64,
    /// Distinct terms that give the full diversity part.
    pub full_terms: u32,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            mentions: 0.45,
            full_mentions: 12,
            per_words: 1000,
            spread: 0.35,
            full_spread: 0.6,
            title_or_lede: 0.12,
            diversity: 0.08,
            full_terms: 4,
        }
    }
}

impl Keywords {
    /// The section's own checks (`Config::load` runs them): thresholds and
    /// weights in range, ambiguous groups well formed.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("keywords.min_relevance_score", self.min_relevance_score),
            ("keywords.score.full_spread", self.score.full_spread),
            ("keywords.min_prose_ratio", self.min_prose_ratio),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!(
                    "{name}: expected a number between 0 and 1, got {v}"
                ));
            }
        }
        let w = &self.score;
        for (name, v) in [
            ("mentions", w.mentions),
            ("spread", w.spread),
            ("title_or_lede", w.title_or_lede),
            ("diversity", w.diversity),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!(
                    "keywords.score.{name}: expected a weight of 0 or more, got {v}"
                ));
            }
        }
        if w.mentions + w.spread + w.title_or_lede + w.diversity <= 0.0 {
            return Err("keywords.score: expected at least one weight above 0".into());
        }
        if w.full_mentions == 0 || w.full_terms == 0 || w.full_spread == 0.0 {
            return Err(
                "keywords.score: full_mentions, full_terms and full_spread must be above 0".into(),
            );
        }
        if let Some(m) = &self.model {
            m.validate()?;
        }
        check_ambiguous("keywords", &self.strong_targets, &self.ambiguous)?;
        for (code, v) in &self.languages {
            check_ambiguous(
                &format!("keywords.languages.{}", code.0),
                &v.strong_targets,
                &v.ambiguous,
            )?;
        }
        Ok(())
    }
}

/// Each `ambiguous` group has terms and context words, and its terms are
/// strong terms of the same vocabulary.
fn check_ambiguous(prefix: &str, strong: &[String], ambiguous: &[Ambiguous]) -> Result<(), String> {
    for (i, a) in ambiguous.iter().enumerate() {
        if a.terms.is_empty() || a.context.is_empty() {
            return Err(format!(
                "{prefix}.ambiguous[{i}]: expected non-empty `terms` and `context` lists"
            ));
        }
        if let Some(t) = a.terms.iter().find(|t| !strong.contains(t)) {
            return Err(format!(
                "{prefix}.ambiguous[{i}].terms: `{t}` is not in strong_targets (write it \
                 exactly as it is there)"
            ));
        }
    }
    Ok(())
}

impl Default for Keywords {
    fn default() -> Self {
        Keywords {
            targets: Vec::new(),
            strong_targets: Vec::new(),
            related: Vec::new(),
            min_target_mentions: 3,
            min_strong_mentions: 2,
            min_strong_density: 8.0,
            min_dense_mentions: 5,
            min_prose_ratio: 0.5,
            ambiguous: Vec::new(),
            min_relevance_score: 0.5,
            min_article_words: 120,
            score: ScoreWeights::default(),
            model: None,
            languages: BTreeMap::new(),
        }
    }
}
