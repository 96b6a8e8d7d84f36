//! The relevance score in [0, 1] from the [`Evidence`], with its reasons.
//!
//! A page with fewer than `min_article_words` prose words is thin and scores
//! 0. Otherwise, with a fitted `keywords.model` (the shipped config has one),
//! the score is that model's probability (see [`super::model`]); without one
//! it is the weighted mean (weights from `keywords.score`) of four parts,
//! each in [0, 1]:
//!
//! * **mentions**: `ln(1 + m) / ln(1 + full_mentions)`, capped at 1, where `m`
//!   counts strong mentions in prose sentences, each in distinct surrounding
//!   words, ambiguous terms only with a context word in their paragraph;
//! * **spread**: the share of the story's paragraphs that mention the topic,
//!   divided by `full_spread`, capped at 1 (a passing mention in a business
//!   story, or a gadget review that says "AI" twice, stays low);
//! * **title or lede**: 1 when a counted strong term is in the title or lede;
//! * **diversity**: `(distinct terms - 1) / (full_terms - 1)`, capped at 1
//!   (one term repeated is weaker evidence than several).

use super::evidence::{Evidence, long_text_factor};
use super::model::{self, Effect, Model};
use super::{Keywords, ScoreWeights};

/// The score of the evidence: 0 for a thin page, the model's probability
/// with a model, the weighted mean of the parts without.
pub(super) fn value(ev: &Evidence, k: &Keywords) -> f64 {
    if ev.prose_words < k.min_article_words {
        return 0.0;
    }
    match &k.model {
        Some(m) => model::sigmoid(m.logit(&model::values(ev, k.score.per_words))),
        None => parts(ev, &k.score, k.min_article_words).value(&k.score),
    }
}

/// Each feature's value, weight (0 without a model) and effect.
pub(super) fn effects(ev: &Evidence, k: &Keywords) -> Vec<Effect> {
    let none = Model {
        bias: 0.0,
        weights: Default::default(),
    };
    k.model
        .as_ref()
        .unwrap_or(&none)
        .effects(&model::values(ev, k.score.per_words))
}

/// The model's reasons: the features that moved the score, largest effect
/// first, each with what it counted and the knob that changes it.
pub(super) fn model_reasons(ev: &Evidence, m: &Model, effects: &[Effect]) -> Vec<String> {
    let mut moved: Vec<&Effect> = effects.iter().filter(|e| e.effect != 0.0).collect();
    moved.sort_by(|a, b| b.effect.abs().total_cmp(&a.effect.abs()));
    let z = m.bias + effects.iter().map(|e| e.effect).sum::<f64>();
    let mut out = vec![
        format!(
            "log-odds {z:+.2}, the sum of the lines below: score 1 / (1 + e^{:+.2}) = {:.2}",
            -z,
            model::sigmoid(z)
        ),
        format!(
            "{:+.2} to start: a page with no evidence (keywords.model.bias)",
            m.bias
        ),
    ];
    out.extend(moved.iter().map(|e| {
        format!(
            "{:+.2} {}: {}; weight keywords.model.weights.{}",
            e.effect,
            if e.effect > 0.0 {
                "toward relevant"
            } else {
                "against"
            },
            model::describe(&e.feature, ev),
            e.feature
        )
    }));
    let silent: Vec<String> = effects
        .iter()
        .filter(|e| e.effect == 0.0 && e.weight > 0.0)
        .map(|e| model::describe(&e.feature, ev))
        .collect();
    if !silent.is_empty() {
        out.push(format!("missing: {}", silent.join("; ")));
    }
    let ignored = not_counted(ev);
    if !ignored.is_empty() {
        out.push(ignored.trim_start_matches("; ").to_string());
    }
    out
}

/// The four parts of the score, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Parts {
    pub thin: bool,
    pub mentions: f64,
    pub spread: f64,
    pub title: f64,
    pub diversity: f64,
}

pub(super) fn parts(ev: &Evidence, w: &ScoreWeights, min_words: u32) -> Parts {
    let m = f64::from(ev.prose_mentions) * long_text_factor(ev.prose_words, w.per_words);
    let mentions = (m.ln_1p() / f64::from(w.full_mentions.max(1)).ln_1p()).min(1.0);
    let spread = if w.full_spread > 0.0 {
        (ev.spread() / w.full_spread).min(1.0)
    } else {
        1.0
    };
    let title = if ev.title_mentions + ev.lede_mentions > 0 {
        1.0
    } else {
        0.0
    };
    let diversity = if ev.distinct_terms == 0 {
        0.0
    } else if w.full_terms <= 1 {
        1.0
    } else {
        (f64::from(ev.distinct_terms - 1) / f64::from(w.full_terms - 1)).min(1.0)
    };
    Parts {
        thin: ev.prose_words < min_words,
        mentions,
        spread,
        title,
        diversity,
    }
}

impl Parts {
    /// The weighted mean, or 0 for a thin page.
    pub fn value(&self, w: &ScoreWeights) -> f64 {
        let total = w.mentions + w.spread + w.title_or_lede + w.diversity;
        if self.thin || total <= 0.0 {
            return 0.0;
        }
        let sum = w.mentions * self.mentions
            + w.spread * self.spread
            + w.title_or_lede * self.title
            + w.diversity * self.diversity;
        (sum / total).clamp(0.0, 1.0)
    }
}

/// One line per part, saying what it counted.
pub(super) fn reasons(ev: &Evidence, p: &Parts, min_words: u32) -> Vec<String> {
    let mut out = Vec::new();
    if p.thin {
        out.push(format!(
            "thin page: {} prose word(s), {min_words} needed (min_article_words): score 0",
            ev.prose_words
        ));
    }
    out.push(format!(
        "mentions {:.2}: {} strong mention(s) in {} prose words{}",
        p.mentions,
        ev.prose_mentions,
        ev.prose_words,
        not_counted(ev)
    ));
    out.push(format!(
        "spread {:.2}: {} of {} paragraph(s) mention the topic",
        p.spread, ev.paragraphs_with_mentions, ev.paragraphs
    ));
    out.push(format!(
        "title/lede {:.2}: {} counted mention(s) in the title, {} in the lede",
        p.title, ev.title_mentions, ev.lede_mentions
    ));
    out.push(format!(
        "diversity {:.2}: {} distinct strong term(s)",
        p.diversity, ev.distinct_terms
    ));
    out
}

fn not_counted(ev: &Evidence) -> String {
    let mut parts = Vec::new();
    if ev.chrome_mentions > 0 {
        parts.push(format!("{} in menus or headline lists", ev.chrome_mentions));
    }
    if ev.repeated_mentions > 0 {
        parts.push(format!(
            "{} repeated in the same words",
            ev.repeated_mentions
        ));
    }
    if ev.unconfirmed_mentions > 0 {
        parts.push(format!(
            "{} ambiguous without a context word",
            ev.unconfirmed_mentions
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; not counted: {}", parts.join(", "))
    }
}
